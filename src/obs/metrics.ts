// The host's Prometheus metrics (docs/operations.md, "Metrics"). Invariants: every name is
// `harnesshost_…` with a unit suffix (`_seconds`, `_bytes`) and `_total` on counters; label sets are
// bounded — never a session id, and every open-ended value (harness, model, tool) is capped at
// MAX_LABEL_VALUES distinct values per label, later ones counted as "other"; recording is a cached
// bound child (or one Map lookup) and a field add — no label hashing, no allocation beyond the first
// use of a label combination (src/obs/fast-metrics.ts).
import { createRequire } from "node:module";
import type * as PromClient from "prom-client";
import { type CounterChild, FastCounter, FastHistogram, type HistogramChild } from "./fast-metrics.js";

// prom-client's index also loads its default process metrics (and with them @opentelemetry/api), its
// push gateway and its cluster aggregator, ~80 module files: a host that does not collect process
// metrics never needs them, and serve adds them a while after it is ready, or at the first scrape if
// that comes first (collectProcessMetricsSoon), so its first requests do not wait for that load.
const require = createRequire(import.meta.url);
const Registry = require("prom-client/lib/registry") as typeof PromClient.Registry;
type Registry = PromClient.Registry;
const Gauge = require("prom-client/lib/gauge") as typeof PromClient.Gauge;

/** Distinct values an open-ended label (harness, model, tool) takes before new ones become "other". */
export const MAX_LABEL_VALUES = 64;

/** Latency buckets (seconds) for turns, model calls and session operations: 5 ms … 5 min. */
const SLOW_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
/** Latency buckets (seconds) for journal commits and RPCs: 100 µs … 10 s. */
const FAST_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 2.5, 10];
/** Wait (approval/question) buckets: 1 s … 1 week. */
const WAIT_BUCKETS = [1, 10, 60, 300, 900, 3600, 4 * 3600, 86400, 7 * 86400];

export type TurnOutcome = "completed" | "parked" | "failed" | "cancelled";
export type Tier = "stateless" | "memory";
export type SessionOp = "suspend" | "resume" | "fork" | "approve";
export type WaitKind = "approval" | "question";

/** Caps the distinct values of one label. */
class LabelCap {
  private readonly seen = new Set<string>();
  value(v: string): string {
    if (this.seen.has(v)) return v;
    if (this.seen.size >= MAX_LABEL_VALUES) return "other";
    this.seen.add(v);
    return v;
  }
}

function counter(families: Registry, name: string, help: string, labelNames: string[]): FastCounter {
  return new FastCounter(name, help, labelNames, families);
}

function histogram(
  families: Registry,
  name: string,
  help: string,
  labelNames: string[],
  buckets: number[],
): FastHistogram {
  return new FastHistogram(name, help, labelNames, families, buckets);
}

/** One journal backend's commit counters, bound once (the journal decorator records through it). */
export interface CommitMeter {
  committed(seconds: number, records: number, bytes: number): void;
}

/** One harness × tier's turn counters, bound on first use and cached. */
export interface TurnMeter {
  started(): void;
  finished(outcome: TurnOutcome, seconds: number): void;
}

/** What the sessions gauge reads at scrape time (per compute state; absent states are 0). */
export type SessionCounts = () => Promise<Readonly<Record<string, number>>>;

export class HostMetrics {
  /** Every metric family of this host (a prom-client Registry): what a scrape renders. */
  readonly families = new Registry();
  /** The process families: not asked for (undefined), due on a timer, or added ("on"). */
  private processMetrics: NodeJS.Timeout | "on" | undefined;
  private readonly harnessCap = new LabelCap();
  private readonly modelCap = new LabelCap();
  private readonly toolCap = new LabelCap();

  private readonly turnsStarted = counter(
    this.families,
    "harnesshost_turns_started_total",
    "Turns started (exec and resume re-drives), by harness and tier.",
    ["harness", "tier"],
  );
  private readonly turnsFinished = counter(
    this.families,
    "harnesshost_turns_finished_total",
    "Turns finished, by harness, tier and outcome (completed, parked, failed, cancelled).",
    ["harness", "tier", "outcome"],
  );
  private readonly turnSeconds = histogram(
    this.families,
    "harnesshost_turn_duration_seconds",
    "Wall time of a turn from admission to its last commit (checkpoint included), by harness, tier and outcome.",
    ["harness", "tier", "outcome"],
    SLOW_BUCKETS,
  );
  private readonly commitSeconds = histogram(
    this.families,
    "harnesshost_journal_commit_duration_seconds",
    "Latency of one durable journal commit (append, batch, fenced append, fork), by backend.",
    ["backend"],
    FAST_BUCKETS,
  );
  private readonly recordsAppended = counter(
    this.families,
    "harnesshost_journal_records_appended_total",
    "Records appended to the journal, by backend.",
    ["backend"],
  );
  private readonly bytesAppended = counter(
    this.families,
    "harnesshost_journal_appended_bytes_total",
    "Encoded event bytes appended to the journal, by backend.",
    ["backend"],
  );
  private readonly conflicts = counter(
    this.families,
    "harnesshost_fence_conflicts_total",
    "Journal writes refused because another writer moved the session on (ABORTED): kind conflict (head moved), fenced (stale fence) or busy (session held).",
    ["kind"],
  );
  private readonly modelCalls = counter(
    this.families,
    "harnesshost_model_calls_total",
    "Live model calls the host made (replays serve from the journal and are not counted), by model and outcome.",
    ["model", "outcome"],
  );
  private readonly modelSeconds = histogram(
    this.families,
    "harnesshost_model_call_duration_seconds",
    "Latency of a live model call (retries included), by model.",
    ["model"],
    SLOW_BUCKETS,
  );
  private readonly modelTokens = counter(
    this.families,
    "harnesshost_model_tokens_total",
    "Tokens the model reported, by model and direction (input, output).",
    ["model", "direction"],
  );
  private readonly toolCalls = counter(
    this.families,
    "harnesshost_tool_calls_total",
    "Tool calls committed in turns, by tool and outcome (ok, error, denied, parked).",
    ["tool", "outcome"],
  );
  private readonly waitsPending = new Gauge({
    name: "harnesshost_waits_pending",
    help: "Turns parked on an undecided approval or question by this host and not yet decided here, by kind.",
    labelNames: ["kind"],
    registers: [this.families],
  });
  private readonly waitSeconds = histogram(
    this.families,
    "harnesshost_wait_duration_seconds",
    "Time from a turn parking on a gate to its decision, by kind (approval, question) and decision (approved, denied).",
    ["kind", "decision"],
    WAIT_BUCKETS,
  );
  private readonly opSeconds = histogram(
    this.families,
    "harnesshost_session_operation_duration_seconds",
    "Latency of suspend, resume, fork and approve, by operation and outcome (ok, error); the count is the number of operations.",
    ["operation", "outcome"],
    SLOW_BUCKETS,
  );
  private readonly snapshotBytes = counter(
    this.families,
    "harnesshost_snapshot_bytes_total",
    "Actor-state snapshot bytes written to and read from the snapshot store, by direction (written, read).",
    ["direction"],
  );
  private readonly checkpoints = counter(
    this.families,
    "harnesshost_checkpoints_total",
    "Per-turn checkpoints of memory actors, by harness and outcome (ok, failed).",
    ["harness", "outcome"],
  );
  private readonly positions = counter(
    this.families,
    "harnesshost_verified_positions_total",
    "Verified positions (docs/protocol.md §5.9): a first touch resumed from one (used) or refused it and walked the whole chain (refused); one stored (stored) or a store that failed (store_failed).",
    ["outcome"],
  );
  private readonly nodes = new Gauge({
    name: "harnesshost_harness_nodes",
    help: "Harness node processes this host runs (spawned runtime), by harness.",
    labelNames: ["harness"],
    registers: [this.families],
  });
  private readonly authRefusals = counter(
    this.families,
    "harnesshost_auth_refusals_total",
    "Calls refused before any handler ran, by the permission the caller lacked (unauthenticated: no valid credential).",
    ["permission"],
  );
  private readonly rpcs = counter(
    this.families,
    "harnesshost_rpcs_total",
    "RPCs finished, by listener (sessions, registry), method and gRPC status code.",
    ["listener", "method", "code"],
  );
  private readonly rpcSeconds = histogram(
    this.families,
    "harnesshost_rpc_duration_seconds",
    "Latency of an RPC (a streamed Exec: until its last message), by listener and method.",
    ["listener", "method"],
    FAST_BUCKETS,
  );

  private sessionCounts: SessionCounts | undefined;
  private lockCounts: (() => { readonly inUse: number; readonly parked: number }) | undefined;
  private readonly turnMeters = new Map<string, Map<Tier, TurnMeter>>();
  private readonly rpcMeters = new Map<string, { seconds: HistogramChild; codes: Map<string, CounterChild> }>();

  constructor() {
    const self = this;
    new Gauge({
      name: "harnesshost_sessions",
      help: "Sessions in the journal by compute state (live, warm, cold, none, terminated); read at scrape time.",
      labelNames: ["state"],
      registers: [this.families],
      async collect() {
        const counts = self.sessionCounts ? await self.sessionCounts().catch(() => undefined) : undefined;
        this.reset();
        for (const [state, n] of Object.entries(counts ?? {})) this.set({ state: state.toLowerCase() }, n);
      },
    });
    new Gauge({
      name: "harnesshost_session_locks",
      help: "Cross-host session locks this host holds (shared journals), by state (in_use, parked); read at scrape time.",
      labelNames: ["state"],
      registers: [this.families],
      collect() {
        this.reset();
        const counts = self.lockCounts?.();
        if (counts === undefined) return;
        this.set({ state: "in_use" }, counts.inUse);
        this.set({ state: "parked" }, counts.parked);
      },
    });
  }

  /** Where the session-locks gauge reads its counts (a journal several hosts share). */
  countSessionLocksWith(counts: () => { readonly inUse: number; readonly parked: number }): void {
    this.lockCounts = counts;
  }

  /** Where the sessions gauge reads its counts (the journal). */
  countSessionsWith(counts: SessionCounts): void {
    this.sessionCounts = counts;
  }

  /** Adds the process_* and nodejs_* metrics, once (serve does; library hosts leave the process alone). */
  collectProcessMetrics(): void {
    if (this.processMetrics === "on") return;
    if (this.processMetrics !== undefined) clearTimeout(this.processMetrics);
    this.processMetrics = "on";
    const { collectDefaultMetrics } = require("prom-client") as typeof PromClient;
    collectDefaultMetrics({ register: this.families, prefix: "harnesshost_" });
  }

  /**
   * Adds the process_* and nodejs_* metrics `afterMs` from now (a timer that keeps nothing alive), or
   * at the first render before then: a scrape always sees them. Their GC and event-loop histograms
   * count from the moment they are added.
   */
  collectProcessMetricsSoon(afterMs: number): void {
    if (this.processMetrics !== undefined) return;
    this.processMetrics = setTimeout(() => this.collectProcessMetrics(), afterMs);
    this.processMetrics.unref();
  }

  /** The bound turn counters of `harness` × `tier` (cached; the harness label is capped). */
  turnMeter(harness: string, tier: Tier): TurnMeter {
    const h = this.harnessCap.value(harness);
    let byTier = this.turnMeters.get(h);
    if (byTier === undefined) {
      byTier = new Map();
      this.turnMeters.set(h, byTier);
    }
    let meter = byTier.get(tier);
    if (meter === undefined) {
      meter = this.makeTurnMeter(h, tier);
      byTier.set(tier, meter);
    }
    return meter;
  }

  private makeTurnMeter(harness: string, tier: Tier): TurnMeter {
    const started = this.turnsStarted.child(harness, tier);
    const outcomes = new Map<TurnOutcome, { n: CounterChild; s: HistogramChild }>();
    const finished = this.turnsFinished;
    const seconds = this.turnSeconds;
    return {
      started: () => started.inc(),
      finished(outcome, secs) {
        let o = outcomes.get(outcome);
        if (o === undefined) {
          o = { n: finished.child(harness, tier, outcome), s: seconds.child(harness, tier, outcome) };
          outcomes.set(outcome, o);
        }
        o.n.inc();
        o.s.observe(secs);
      },
    };
  }

  turnStarted(harness: string, tier: Tier): void {
    this.turnMeter(harness, tier).started();
  }

  turnFinished(harness: string, tier: Tier, outcome: TurnOutcome, seconds: number): void {
    this.turnMeter(harness, tier).finished(outcome, seconds);
  }

  /** The bound commit counters of one journal backend. */
  commitMeter(backend: string): CommitMeter {
    const latency = this.commitSeconds.child(backend);
    const records = this.recordsAppended.child(backend);
    const bytes = this.bytesAppended.child(backend);
    return {
      committed(seconds, n, b) {
        latency.observe(seconds);
        if (n > 0) records.inc(n);
        if (b > 0) bytes.inc(b);
      },
    };
  }

  journalCommit(backend: string, seconds: number, records: number, bytes: number): void {
    this.commitMeter(backend).committed(seconds, records, bytes);
  }

  fenceConflict(kind: "conflict" | "fenced" | "busy"): void {
    this.conflicts.child(kind).inc();
  }

  modelCall(model: string, outcome: "ok" | "error", seconds: number, inputTokens: number, outputTokens: number): void {
    const m = this.modelCap.value(model || "default");
    this.modelCalls.child(m, outcome).inc();
    this.modelSeconds.child(m).observe(seconds);
    if (inputTokens > 0) this.modelTokens.child(m, "input").inc(inputTokens);
    if (outputTokens > 0) this.modelTokens.child(m, "output").inc(outputTokens);
  }

  toolCall(tool: string, outcome: "ok" | "error" | "denied" | "parked"): void {
    this.toolCalls.child(this.toolCap.value(tool), outcome).inc();
  }

  waitOpened(kind: WaitKind): void {
    this.waitsPending.inc({ kind });
  }

  waitDecided(kind: WaitKind, approved: boolean, seconds: number | undefined, openedHere: boolean): void {
    if (openedHere) this.waitsPending.dec({ kind });
    if (seconds !== undefined && seconds >= 0)
      this.waitSeconds.child(kind, approved ? "approved" : "denied").observe(seconds);
  }

  sessionOperation(op: SessionOp, ok: boolean, seconds: number): void {
    this.opSeconds.child(op, ok ? "ok" : "error").observe(seconds);
  }

  snapshot(direction: "written" | "read", bytes: number): void {
    this.snapshotBytes.child(direction).inc(bytes);
  }

  checkpoint(harness: string, ok: boolean): void {
    this.checkpoints.child(this.harnessCap.value(harness), ok ? "ok" : "failed").inc();
  }

  verifiedPosition(outcome: "used" | "refused" | "stored" | "store_failed"): void {
    this.positions.child(outcome).inc();
  }

  nodeStarted(harness: string): void {
    this.nodes.inc({ harness: this.harnessCap.value(harness) });
  }

  nodeExited(harness: string): void {
    this.nodes.dec({ harness: this.harnessCap.value(harness) });
  }

  /** A call refused by auth: `permission` lacked, or "unauthenticated" (label values: the permission table's words). */
  authRefused(permission: string): void {
    this.authRefusals.child(permission).inc();
  }

  rpc(listener: string, method: string, code: string, seconds: number): void {
    const key = `${listener} ${method}`;
    let m = this.rpcMeters.get(key);
    if (m === undefined) {
      m = { seconds: this.rpcSeconds.child(listener, method), codes: new Map() };
      this.rpcMeters.set(key, m);
    }
    let c = m.codes.get(code);
    if (c === undefined) {
      c = this.rpcs.child(listener, method, code);
      m.codes.set(code, c);
    }
    c.inc();
    m.seconds.observe(seconds);
  }

  /** The exposition text (Prometheus text format 0.0.4). */
  render(): Promise<string> {
    if (this.processMetrics !== undefined) this.collectProcessMetrics();
    return this.families.metrics();
  }

  get contentType(): string {
    return this.families.contentType;
  }
}
