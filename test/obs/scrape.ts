// Reading a Prometheus exposition in tests: one sample's value by metric name and labels, and the set
// of metric families an exposition declares. Invariant: a sample matches when every label given is
// present with that value (other labels may exist); absent samples read as undefined, never 0.
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export function parseExposition(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

/** The sum of the samples named `name` whose labels include `labels`; undefined when none matches. */
export function sampleValue(
  samples: readonly Sample[],
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const hits = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return hits.length === 0 ? undefined : hits.reduce((n, s) => n + s.value, 0);
}

/** Metric families declared by `# TYPE` lines. */
export function familiesOf(text: string): Set<string> {
  return new Set([...text.matchAll(/^# TYPE (\S+) \S+$/gm)].map((m) => m[1]!));
}

/**
 * Every metric family the host declares: test/obs/metrics.test.ts asserts each is in a real scrape;
 * docs/operations.md lists each; the Grafana dashboard queries only these.
 */
export const METRIC_FAMILIES = [
  "harnesshost_turns_started_total",
  "harnesshost_turns_finished_total",
  "harnesshost_turn_duration_seconds",
  "harnesshost_journal_commit_duration_seconds",
  "harnesshost_journal_records_appended_total",
  "harnesshost_journal_appended_bytes_total",
  "harnesshost_fence_conflicts_total",
  "harnesshost_model_calls_total",
  "harnesshost_model_call_duration_seconds",
  "harnesshost_model_tokens_total",
  "harnesshost_tool_calls_total",
  "harnesshost_waits_pending",
  "harnesshost_wait_duration_seconds",
  "harnesshost_session_operation_duration_seconds",
  "harnesshost_snapshot_bytes_total",
  "harnesshost_checkpoints_total",
  "harnesshost_sessions",
  "harnesshost_harness_nodes",
  "harnesshost_session_locks",
  "harnesshost_rpcs_total",
  "harnesshost_rpc_duration_seconds",
  "harnesshost_process_resident_memory_bytes",
];
