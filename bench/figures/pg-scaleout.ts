// pg_scaleout_2_hosts_ratio, pg_scaleout_3_hosts_ratio, pg_scaleout_1_host_turns_per_s: 1, 2 and 3
// `harnesshost serve` processes on one PostgreSQL schema each, driven by one client process with 300
// sessions (session i on host i mod N) each running echo turns over gRPC at the same time; each host
// gets at most IN_FLIGHT calls at once from the client (below its 256 held-session locks, so no
// call is refused for capacity). The ratio is completed turns/s with N hosts over one host, same run.
// Beside the figure, the profile that says what bounds it: CPU seconds of the hosts, of PostgreSQL's
// processes, of the client and of the whole machine (other work included) per turn; what PostgreSQL's
// active backends were waiting on (sampled pg_stat_activity: Lock, IO such as WALSync, none = on CPU);
// and WAL fsyncs per turn (pg_stat_wal). Invariant: every process, schema and directory it makes is
// removed in `finally`; every turn's answer is checked, a failed turn is counted, never hidden.
import { readdirSync, readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { promptText } from "../lib/echo-turns.js";
import { dropPgSchema, freshPgSchema, pgJournalUrl, pgQuery, requirePg } from "../lib/pg.js";
import { startServe, type ServeProc } from "../lib/serve-procs.js";
import { round } from "../lib/stats.js";
import { scratchDir } from "../lib/tmp.js";
import type { Detail, Figure, FigureResult, RunOptions } from "../lib/types.js";

const IN_FLIGHT = 12;
const TICKS_PER_S = 100;

/** utime + stime of a process, seconds (0 when it is gone). */
function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_S;
  } catch {
    return 0;
  }
}

/** Pids of every PostgreSQL server process on this machine (backends included). */
function postgresPids(): number[] {
  const out: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, "utf8").trim() === "postgres") out.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

/** Busy CPU seconds of the whole machine (all cores, every process), from /proc/stat. */
function machineBusySeconds(): number {
  const line = readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "";
  const [, user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).map(Number);
  return ((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0)) / TICKS_PER_S;
}

async function walSyncs(): Promise<number> {
  const rows = await pgQuery<{ wal_sync: string }>("SELECT wal_sync::text AS wal_sync FROM pg_stat_wal").catch(
    () => [],
  );
  return Number(rows[0]?.wal_sync ?? 0);
}

/** A counting semaphore: at most `n` holders at once. */
function semaphore(n: number): <T>(fn: () => Promise<T>) => Promise<T> {
  let free = n;
  const waiting: (() => void)[] = [];
  return async (fn) => {
    if (free === 0) await new Promise<void>((res) => waiting.push(res));
    else free--;
    try {
      return await fn();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else free++;
    }
  };
}

interface ScaleRun {
  readonly hosts: number;
  readonly turnsPerS: number;
  readonly errors: number;
  readonly firstError: string;
  readonly profile: Record<string, Detail>;
}

/** The first `hostCount` of `all` drive `sessions` fresh sessions (uids are new for every run). */
async function runWith(
  all: readonly ServeProc[],
  hostCount: number,
  sessions: number,
  turnsEach: number,
): Promise<ScaleRun> {
  const procs = all.slice(0, hostCount);
  {
    const gates = procs.map(() => semaphore(IN_FLIGHT));
    const on = (i: number) => ({ proc: procs[i % hostCount]!, gate: gates[i % hostCount]! });
    // Each session is created by a first turn on its host (unmeasured): it warms nodes and caches.
    const uids = await Promise.all(
      Array.from({ length: sessions }, (_, i) =>
        on(i).gate(
          async () => (await on(i).proc.api.exec({ harness: "echo", inputs: ["warm"] })).session.metadata?.uid ?? "",
        ),
      ),
    );
    let errors = 0;
    let firstError = "";
    const waits = new Map<string, number>();
    let sampling = true;
    let sampleCount = 0;
    const sampler = (async () => {
      while (sampling) {
        const rows = await pgQuery<{ w: string; n: string }>(
          `SELECT COALESCE(wait_event_type || ':' || wait_event, 'on CPU') AS w, count(*)::text AS n FROM pg_stat_activity
           WHERE state = 'active' AND backend_type = 'client backend' AND pid <> pg_backend_pid() AND datname = current_database()
           GROUP BY 1`,
        ).catch(() => []);
        sampleCount++;
        for (const r of rows) waits.set(r.w, (waits.get(r.w) ?? 0) + Number(r.n));
        await new Promise((res) => setTimeout(res, 50));
      }
    })();
    const pgPids = postgresPids();
    const cpu0 = {
      hosts: procs.reduce((n, p) => n + cpuSeconds(p.pid), 0),
      pg: pgPids.reduce((n, p) => n + cpuSeconds(p), 0),
      client: process.cpuUsage(),
      machine: machineBusySeconds(),
      wal: await walSyncs(),
    };
    const t0 = performance.now();
    await Promise.all(
      uids.map(async (uid, i) => {
        for (let k = 0; k < turnsEach; k++) {
          const text = promptText(i * 100 + k, 60);
          try {
            const res = await on(i).gate(() => on(i).proc.api.exec({ session: uid, inputs: [text] }));
            if (res.output !== `echo:${text}`) throw new Error(`wrong answer ${JSON.stringify(res.output)}`);
          } catch (err) {
            errors++;
            firstError ||= err instanceof Error ? err.message : String(err);
          }
        }
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    sampling = false;
    await sampler;
    const turns = sessions * turnsEach - errors;
    const clientCpu = process.cpuUsage(cpu0.client);
    const perTurnMs = (s: number) => round((s * 1000) / Math.max(1, turns));
    const hostsCpu = procs.reduce((n, p) => n + cpuSeconds(p.pid), 0) - cpu0.hosts;
    const pgCpu = pgPids.reduce((n, p) => n + cpuSeconds(p), 0) - cpu0.pg;
    const machine = machineBusySeconds() - cpu0.machine;
    const samples = [...waits.values()].reduce((a, b) => a + b, 0);
    const profile: Record<string, Detail> = {
      seconds: round(seconds),
      hostsCpuMsPerTurn: perTurnMs(hostsCpu),
      postgresCpuMsPerTurn: perTurnMs(pgCpu),
      clientCpuMsPerTurn: perTurnMs((clientCpu.user + clientCpu.system) / 1e6),
      machineBusyMsPerTurn: perTurnMs(machine),
      machineBusyCores: round(machine / seconds),
      walSyncsPerTurn: round(((await walSyncs()) - cpu0.wal) / Math.max(1, turns)),
      pgSamples: sampleCount,
      pgActiveBackendsPerSample: round(samples / Math.max(1, sampleCount)),
      pgActiveBackendWaits: [...waits]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 6)
        .map(([w, n]) => `${w} ${Math.round((100 * n) / Math.max(1, samples))}%`)
        .join(", "),
    };
    return { hosts: hostCount, turnsPerS: turns / seconds, errors, firstError, profile };
  }
}

export const pgScaleout: Figure = {
  key: "pg_scaleout_2_hosts_ratio",
  extraKeys: ["pg_scaleout_3_hosts_ratio", "pg_scaleout_1_host_turns_per_s"],
  title: "PostgreSQL scale-out: 300 sessions on 1, 2 and 3 serve processes (echo turns over gRPC)",
  // Three serve processes started from source, and 3 × 300 sessions' turns: minutes on a loaded machine.
  timeoutMs: { quick: 180_000, full: 900_000 },
  async run(opts: RunOptions): Promise<FigureResult> {
    await requirePg();
    const sessions = opts.quick ? 12 : 300;
    const turnsEach = opts.quick ? 1 : 2;
    const load0 = loadavg()[0] ?? 0;
    const schema = freshPgSchema("scaleout");
    const dir = scratchDir("pg-scaleout");
    const procs: ServeProc[] = [];
    const runs: ScaleRun[] = [];
    try {
      // Three hosts on one schema, started once (the first creates the schema); a run with N hosts
      // sends its sessions to the first N, the others stay idle.
      const url = pgJournalUrl(schema);
      procs.push(await startServe(url, dir, "host-0"));
      procs.push(...(await Promise.all([startServe(url, dir, "host-1"), startServe(url, dir, "host-2")])));
      for (const n of [1, 2, 3]) runs.push(await runWith(procs, n, sessions, turnsEach));
    } finally {
      await Promise.all(procs.map((p) => p.stop()));
      await dropPgSchema(schema);
      dir.dispose();
    }
    const [one, two, three] = runs as [ScaleRun, ScaleRun, ScaleRun];
    const prefixed = (run: ScaleRun) =>
      Object.fromEntries(Object.entries(run.profile).map(([k, v]) => [`h${run.hosts}.${k}`, v]));
    const errors = runs.reduce((n, r) => n + r.errors, 0);
    const firstError = runs.find((r) => r.firstError !== "")?.firstError ?? "";
    return {
      status: "ok",
      value: round(two.turnsPerS / one.turnsPerS),
      unit: "×",
      measured: { median: round(two.turnsPerS), n: 1, unit: "turns/s (2 hosts)" },
      baseline: { median: round(one.turnsPerS), n: 1, unit: "turns/s", what: "one host, same sessions and client" },
      ratio: round(two.turnsPerS / one.turnsPerS),
      target: { op: ">=", value: 1.6 },
      details: {
        sessions,
        turnsEach,
        inFlightPerHost: IN_FLIGHT,
        cpus: cpus().length,
        loadavg1Before: round(load0),
        loadavg1After: round(loadavg()[0] ?? 0),
        errors,
        ...(firstError ? { firstError } : {}),
        ...prefixed(one),
        ...prefixed(two),
        ...prefixed(three),
      },
      also: {
        pg_scaleout_3_hosts_ratio: {
          value: round(three.turnsPerS / one.turnsPerS),
          unit: "×",
          measured: { median: round(three.turnsPerS), n: 1, unit: "turns/s (3 hosts)" },
          baseline: { median: round(one.turnsPerS), n: 1, unit: "turns/s", what: "one host" },
        },
        pg_scaleout_1_host_turns_per_s: { value: round(one.turnsPerS), unit: "turns/s" },
      },
    };
  },
};
