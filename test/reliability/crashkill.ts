// The crash-kill driver (issue "Reliability and security", item 1): runs the real `harnesshost serve`
// with its spawned harness nodes, drives echo and counter sessions over gRPC, SIGKILLs the host or a
// node at seeded random points, restarts, re-drives interrupted turns with Resume, and finally checks
// the journal against everything the clients were told. Invariant: a report with no violations means
// every chain verifies, no acknowledged record is lost or changed, no execution made more than one
// extra model call per cut, every-turn counters never lost or repeated a completed turn, and on-suspend
// counters reported their lost RAM and were recovered by a fork at the named snapshot.
// The first two kills are planned, driven by events rather than timing, so each recovery path runs in
// every run: a host kill while an echo turn's model call is held open (that turn is certainly cut and
// must be re-driven), then a kill of the harness nodes right after an on-suspend counter completed a
// turn past its snapshot (its RAM is lost and it must be recovered by fork). The seeded random kills
// (every acknowledged-record countdown) follow.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { projectExecutions, textMessage, textOf } from "../../src/controller/index.js";
import { EventKind, type LogRecord } from "../../src/gen/agentsessions/v1/common_pb.js";
import { Sessions } from "../../src/gen/agentsessions/v1/session_pb.js";
import { openJournal } from "../../src/journal/index.js";
import type { JournalRecord } from "../../src/journal/types.js";
import { RpcError, createClient, type MethodsOf, type ServiceClient } from "../../src/wire/index.js";
import { CountingModel } from "./counting-model.js";
import { Prng } from "./prng.js";
import { BIN, ServeProcess, until } from "./serve-process.js";

type SessionsClient = ServiceClient<MethodsOf<typeof Sessions>>;

/** echo: local runtime; echo-sp: echo in a spawned node; counter: every-turn; counter-os: on-suspend. */
export type SessionKind = "echo" | "echo-sp" | "counter" | "counter-os";
const HARNESS: Record<SessionKind, string> = {
  echo: "echo",
  "echo-sp": "echosp",
  counter: "counter",
  "counter-os": "counteros",
};

export interface CrashKillOptions {
  readonly seed: number;
  readonly kills: number;
  /** Sessions driven concurrently, per kind. */
  readonly sessions: Readonly<Record<SessionKind, number>>;
  /** Probability that a kill hits the host rather than a harness node (default 0.5). */
  readonly hostKillRatio?: number;
  /** Records acknowledged to clients between two kills: uniform in 1..this (default 24). */
  readonly maxRecordsBetweenKills?: number;
  readonly log?: (line: string) => void;
}

export interface CrashKillReport {
  readonly seed: number;
  readonly kills: number;
  readonly hostKills: number;
  readonly nodeKills: number;
  /** Sessions checked at the end (fork children included). */
  readonly sessions: number;
  readonly turnsAcknowledged: number;
  readonly recordsAcknowledged: number;
  readonly recordsVerified: number;
  readonly lost: number;
  readonly resumes: number;
  /** Interrupted turns that a Resume completed. */
  readonly redrivenTurns: number;
  /** Executions that lived through at least one kill. */
  readonly cutTurns: number;
  readonly modelCalls: number;
  readonly extraModelCalls: number;
  /** max over executions of extra provider invocations / cuts it lived through. */
  readonly maxExtraModelCallsPerCut: number;
  readonly lostRamReported: number;
  readonly forkRecoveries: number;
  readonly violations: readonly string[];
}

interface Execution {
  readonly text: string;
  readonly killsAtStart: number;
  cuts: number;
  done: boolean;
}

interface Worker {
  readonly id: number;
  readonly kind: SessionKind;
  readonly rng: Prng;
  uid: string;
  /** Completed turns of a counter (its expected next output is count + 1). */
  count: number;
  /** Whether the session has a memory snapshot to recover from (counter-os). */
  snapshotted: boolean;
  /** `count` when the snapshot was taken. */
  countAtSnapshot: number;
  needsRecovery: boolean;
  failures: number;
  open: Execution | undefined;
  retired: boolean;
  attempt: number;
}

class Violations {
  readonly list: string[] = [];
  constructor(private readonly log?: (line: string) => void) {}
  add(message: string): void {
    this.log?.(`VIOLATION ${message}`);
    if (this.list.length < 200) this.list.push(message);
  }
}

/**
 * The loud refusals of a memory session whose live RAM is gone: the placer's (before a turn starts on
 * the lost actor) and the re-drive's (a turn cut on the lost actor, whose start state no checkpoint
 * holds). Each names the newest snapshot's seq when there is one; the session is recovered by a fork there.
 */
const LOST_RAM = [
  /was lost with its node or host/,
  /the newest checkpoint \(seq \d+\) does not hold the start state/,
  /no checkpoint holds the start state/,
];

function killNode(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // already gone
  }
}

/**
 * Resolves once the host has reaped every one of `pids` (gone from /proc, not even a zombie): its
 * runtime has then seen the node exit, so the next call meets a host that knows the node is gone
 * instead of racing its exit handler.
 */
function reaped(pids: readonly number[]): Promise<void> {
  return until("the host reaps its killed nodes", () => pids.every((pid) => !existsSync(`/proc/${pid}`)));
}

function codeOf(err: unknown): number {
  return err instanceof RpcError ? err.grpcCode : -1;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The host process, its client, and the kill schedule. */
class Cluster {
  proc!: ServeProcess;
  client!: SessionsClient;
  generation = 0;
  kills = 0;
  hostKills = 0;
  nodeKills = 0;
  finished = false;
  /** Set when the host could not be restarted: the run stops and reports it. */
  fatal: Error | undefined;
  private killing: Promise<void> | undefined;
  private countdown: number;
  /** Planned kills still to come (one per kind of session they need): random kills wait for them. */
  plannedPending: number;
  /** Workers that acknowledged a record since the last kill: a kill waits for every live one. */
  private readonly progressed = new Set<number>();
  private upWaiters: (() => void)[] = [];

  constructor(
    private readonly opts: CrashKillOptions,
    private readonly rng: Prng,
    private readonly args: readonly string[],
    private readonly env: NodeJS.ProcessEnv,
    readonly logs: string[],
  ) {
    this.countdown = this.draw();
    const { sessions } = opts;
    this.plannedPending = (sessions.echo + sessions["echo-sp"] > 0 ? 1 : 0) + (sessions["counter-os"] > 0 ? 1 : 0);
  }

  private draw(): number {
    return this.rng.int(1, this.opts.maxRecordsBetweenKills ?? 24);
  }

  async start(): Promise<void> {
    this.proc = await ServeProcess.start({ args: this.args, env: this.env, onStderr: (c) => void this.logs.push(c) });
    this.client = createClient(Sessions, this.proc.addr);
    this.generation += 1;
    for (const w of this.upWaiters.splice(0)) w();
  }

  /** Resolves when the host is up (immediately unless a restart is in progress). */
  async up(): Promise<void> {
    while (this.killing) await this.killing;
  }

  /**
   * Called for every record acknowledged to a client; fires a kill when the countdown has run out and
   * every live worker made progress since the last kill (so slow sessions — spawned nodes starting —
   * are cut mid-work too, instead of being starved by fast ones).
   */
  acknowledged(worker: number, live: number): void {
    if (this.finished || this.killing || this.plannedPending > 0) return;
    if (worker >= 0) this.progressed.add(worker);
    this.countdown -= 1;
    if (this.countdown > 0 || this.progressed.size < live) return;
    this.countdown = this.draw();
    this.progressed.clear();
    this.killing = this.kill()
      .catch((err: unknown) => {
        this.fatal = err instanceof Error ? err : new Error(String(err));
        this.finished = true;
      })
      .finally(() => {
        this.killing = undefined;
      });
  }

  /** A planned kill: waits for any kill in progress, then kills the host or every harness node. */
  async killNow(target: "host" | "nodes"): Promise<void> {
    await this.up();
    this.killing = this.kill(target)
      .catch((err: unknown) => {
        this.fatal = err instanceof Error ? err : new Error(String(err));
        this.finished = true;
      })
      .finally(() => {
        this.killing = undefined;
        this.plannedPending -= 1;
      });
    await this.killing;
  }

  private async kill(target?: "host" | "nodes"): Promise<void> {
    this.kills += 1;
    if (this.kills >= this.opts.kills && this.plannedPending === 0) this.finished = true;
    const nodes = this.proc.nodePids();
    if (target === "nodes") {
      if (nodes.length === 0) throw new Error("planned node kill: the host has no harness node");
      this.nodeKills += 1;
      this.opts.log?.(`kill #${this.kills} (planned): every node, pids ${nodes.join(" ")}`);
      for (const pid of nodes) killNode(pid);
      await reaped(nodes);
      return;
    }
    const hostKill = target === "host" || nodes.length === 0 || this.rng.next() < (this.opts.hostKillRatio ?? 0.5);
    if (hostKill) {
      this.hostKills += 1;
      this.opts.log?.(`kill #${this.kills}: host pid ${this.proc.pid}`);
      const old = this.client;
      await this.proc.kill();
      old.close();
      await this.start();
    } else {
      const pid = this.rng.pick(nodes);
      this.nodeKills += 1;
      this.opts.log?.(`kill #${this.kills}: node pid ${pid}`);
      killNode(pid);
      await reaped([pid]);
    }
  }
}

export async function runCrashKill(opts: CrashKillOptions): Promise<CrashKillReport> {
  const root = mkdtempSync(join(tmpdir(), "hh-crashkill-"));
  const data = join(root, "data");
  const model = await new CountingModel().start();
  const rng = new Prng(opts.seed);
  const args = [
    "--data",
    data,
    "--addr",
    "127.0.0.1:0",
    "--registry-addr",
    "127.0.0.1:0",
    "--http-addr",
    "127.0.0.1:0",
    "--model",
    model.baseUrl,
    "--model-name",
    "echo",
    "--harness",
    "echosp=spawned:echo",
    "--harness",
    "counteros=spawned:counter",
    "--checkpoint-policy",
    "counteros=on-suspend",
    "--node-idle-ms",
    "60000",
    "--log-level",
    "warn",
  ];
  const env = process.env;
  const logs: string[] = [];
  const cluster = new Cluster(opts, rng.fork(), args, env, logs);
  const violations = new Violations(opts.log);
  const acked = new Map<string, Map<number, string>>();
  const executions = new Map<string, Execution>();
  const allUids = new Set<string>();
  const workers: Worker[] = [];
  const stats = { turns: 0, records: 0, resumes: 0, redriven: 0, lostRam: 0, forks: 0 };
  const plan = { hostCut: "pending" as "pending" | "done", nodeKill: "pending" as "pending" | "done" };

  // Planned kill 1: the first model call of an echo session that already completed a turn is held
  // open until the host has been killed and restarted, so that turn is cut mid-flight.
  model.onCall = (text) => {
    if (plan.hostCut === "done") return undefined;
    const w = workers.find((x) => text.startsWith(`${x.uid}#`));
    if (!w || (w.kind !== "echo" && w.kind !== "echo-sp") || w.count === 0) return undefined;
    plan.hostCut = "done";
    opts.log?.(`planned host kill while the model call for "${text}" is held`);
    return cluster.killNow("host");
  };

  const ack = (w: Worker, rec: LogRecord): void => {
    const uid = w.uid;
    let m = acked.get(uid);
    if (!m) acked.set(uid, (m = new Map()));
    const seq = Number(rec.seq);
    const prior = m.get(seq);
    if (prior !== undefined && prior !== rec.contentHash)
      violations.add(`${uid}: seq ${seq} acknowledged with two hashes`);
    m.set(seq, rec.contentHash);
    stats.records += 1;
    // An on-suspend counter counts as progressed only once it holds a snapshot, so the fork recovery
    // path is exercised rather than cut off before the first suspend.
    cluster.acknowledged(
      w.kind === "counter-os" && !w.snapshotted ? -1 : w.id,
      workers.filter((x) => !x.retired).length,
    );
  };

  const closeExecution = (w: Worker): void => {
    if (!w.open) return;
    w.open.cuts = cluster.kills - w.open.killsAtStart;
    w.open.done = true;
    w.open = undefined;
  };

  /** Reads the session's records through Replay (they are acknowledged too); returns them. */
  const replay = async (uid: string, from = 1, to = 0): Promise<LogRecord[]> => {
    const out: LogRecord[] = [];
    for await (const rec of cluster.client.replay({ session: uid, fromSeq: BigInt(from), toSeq: BigInt(to) }))
      out.push(rec);
    return out;
  };

  const outputsOf = (recs: readonly LogRecord[], executionId?: string): string[] =>
    recs
      .filter(
        (r) =>
          r.event?.kind === EventKind.EVENT_OUTPUT &&
          r.event.body.case === "message" &&
          (executionId === undefined || r.event.executionId === executionId),
      )
      .map((r) => (r.event?.body.case === "message" ? textOf(r.event.body.value) : ""));

  const expectOutput = (w: Worker, text: string, outputs: readonly string[]): void => {
    const want = w.kind === "echo" || w.kind === "echo-sp" ? `echo:${text}` : String(w.count + 1);
    if (outputs.length !== 1 || outputs[0] !== want)
      violations.add(`${w.uid} (${w.kind}): turn "${text}" answered ${JSON.stringify(outputs)}, expected ["${want}"]`);
    w.count += 1;
  };

  const execTurn = async (w: Worker): Promise<void> => {
    const text = `${w.uid}#${w.attempt++}`;
    const exec: Execution = { text, killsAtStart: cluster.kills, cuts: 0, done: false };
    executions.set(text, exec);
    w.open = exec;
    const seen: LogRecord[] = [];
    for await (const update of cluster.client.exec({ session: w.uid, inputs: [textMessage("user", text)] })) {
      if (update.update.case === "record") {
        seen.push(update.update.value);
        ack(w, update.update.value);
      }
    }
    closeExecution(w);
    stats.turns += 1;
    expectOutput(w, text, outputsOf(seen));
    // Planned kill 2: an on-suspend counter holds a turn past its snapshot only in RAM; kill the nodes.
    if (
      w.kind === "counter-os" &&
      w.snapshotted &&
      w.count > w.countAtSnapshot &&
      (plan.hostCut === "done" || opts.sessions.echo + opts.sessions["echo-sp"] === 0) &&
      plan.nodeKill === "pending"
    ) {
      plan.nodeKill = "done";
      await cluster.killNow("nodes");
    }
  };

  const suspendResume = async (w: Worker): Promise<void> => {
    await cluster.client.suspend({ session: w.uid });
    if (w.kind === "counter-os") {
      w.snapshotted = true;
      w.countAtSnapshot = w.count;
    }
    await cluster.client.resume({ session: w.uid });
  };

  /** An on-suspend counter lost its RAM: the refusal must name the loss and a seq; fork there. */
  const recoverLostRam = async (w: Worker, err: unknown): Promise<void> => {
    const msg = messageOf(err);
    stats.lostRam += 1;
    opts.log?.(`${w.uid}: lost RAM reported: ${msg}`);
    const at = /last good snapshot is at seq (\d+)/.exec(msg) ?? /newest checkpoint \(seq (\d+)\)/.exec(msg);
    if (!at) {
      if (w.snapshotted) violations.add(`${w.uid}: lost-RAM refusal names no snapshot although one was taken: ${msg}`);
      w.retired = true;
      return;
    }
    const seq = Number(at[1]);
    // Refused again: never silently restarted from zero.
    try {
      await cluster.client.resume({ session: w.uid });
      violations.add(`${w.uid}: Resume succeeded after a lost-RAM refusal`);
    } catch (again) {
      if (codeOf(again) !== GrpcStatus.FAILED_PRECONDITION) throw again;
    }
    const prefix = await replay(w.uid, 1, seq);
    const completed = prefix.filter((r) => r.event?.kind === EventKind.EVENT_END).length;
    const res = await cluster.client.fork({ session: w.uid, atSeq: BigInt(seq), count: 1 });
    const child = res.children[0]?.metadata?.uid ?? "";
    if (child === "") throw new Error("fork returned no child");
    stats.forks += 1;
    opts.log?.(`${w.uid}: forked ${child} at seq ${seq} (count ${completed})`);
    allUids.add(child);
    w.uid = child;
    w.count = completed;
    w.countAtSnapshot = completed;
    w.open = undefined;
    w.snapshotted = true;
  };

  /** Re-drives the interrupted turn (if any) with Resume and checks its answer. */
  const recover = async (w: Worker): Promise<void> => {
    const before = (await cluster.client.getSession({ uid: w.uid })).lastSeq;
    await cluster.client.resume({ session: w.uid });
    stats.resumes += 1;
    const recs = await replay(w.uid, Number(before) + 1);
    for (const r of recs) ack(w, r);
    const open = w.open;
    if (open) {
      const all = await replay(w.uid);
      const execs = projectExecutions(all.map(journalRecordOf));
      const mine = execs.find((e) => e.inputs.some((m) => textOf(m) === open.text));
      closeExecution(w);
      if (mine) {
        if (!mine.completed) violations.add(`${w.uid}: Resume left execution "${open.text}" incomplete`);
        else stats.redriven += 1;
        stats.turns += 1;
        expectOutput(w, open.text, outputsOf(all, mine.executionId));
      }
    }
    w.needsRecovery = false;
  };

  const step = async (w: Worker): Promise<void> => {
    if (w.needsRecovery) return recover(w);
    const r = w.rng.next();
    // An on-suspend counter is snapshotted right after its first turn, so a later loss names a seq.
    if (w.kind === "counter-os" && (!w.snapshotted ? w.count > 0 : r < 0.15)) return suspendResume(w);
    // (Suspend of a memory session before its first turn is refused NOT_FOUND — reported, not exercised.)
    if (r < 0.06 && w.count > 0) return suspendResume(w);
    return execTurn(w);
  };

  const run = async (w: Worker, final: boolean): Promise<void> => {
    while (!w.retired && !cluster.fatal && (final ? w.needsRecovery : !cluster.finished)) {
      await cluster.up();
      const generation = cluster.generation;
      try {
        await step(w);
        w.failures = 0;
      } catch (err) {
        const code = codeOf(err);
        opts.log?.(`${w.uid} (${w.kind}): ${GrpcStatus[code] ?? code}: ${messageOf(err).slice(0, 160)}`);
        const lost = code === GrpcStatus.FAILED_PRECONDITION && LOST_RAM.some((re) => re.test(messageOf(err)));
        if (lost && w.kind === "counter-os") {
          try {
            await recoverLostRam(w, err);
          } catch {
            w.needsRecovery = true;
          }
          continue;
        }
        if (
          lost ||
          code === GrpcStatus.DATA_LOSS ||
          code === GrpcStatus.FAILED_PRECONDITION ||
          code === GrpcStatus.INVALID_ARGUMENT ||
          code === GrpcStatus.NOT_FOUND
        ) {
          violations.add(`${w.uid} (${w.kind}): ${GrpcStatus[code] ?? code}: ${messageOf(err)}`);
          w.retired = true;
          continue;
        }
        w.needsRecovery = true;
        w.failures += 1;
        if (w.failures > 25) {
          violations.add(`${w.uid} (${w.kind}): gave up after repeated failures; last: ${messageOf(err)}`);
          w.retired = true;
        }
        // A failure while the host was being replaced is waited out; otherwise retry at once.
        if (cluster.generation === generation) await cluster.up();
      }
    }
  };

  try {
    await cluster.start();
    for (const kind of Object.keys(opts.sessions) as SessionKind[]) {
      for (let i = 0; i < opts.sessions[kind]; i++) {
        const created = await cluster.client.createSession({ session: { harness: HARNESS[kind] } });
        const uid = created.metadata?.uid ?? "";
        allUids.add(uid);
        workers.push({
          id: workers.length,
          kind,
          rng: rng.fork(),
          uid,
          count: 0,
          snapshotted: false,
          countAtSnapshot: 0,
          needsRecovery: false,
          failures: 0,
          open: undefined,
          retired: false,
          attempt: 0,
        });
      }
    }
    await Promise.all(workers.map((w) => run(w, false)));
    await cluster.up();
    if (cluster.fatal) throw cluster.fatal;
    // Final pass: no more kills; every interrupted turn is re-driven.
    await Promise.all(workers.map((w) => run(w, true)));
    for (const w of workers) allUids.add(w.uid);
    const code = await cluster.proc.stop();
    cluster.client.close();
    if (code !== 0) violations.add(`serve exited ${code} on SIGTERM`);

    // The CLI's own verify over the data directory.
    const verify = spawnSync(process.execPath, [BIN, "verify", "--data", data, "--json"], { encoding: "utf8" });
    if (verify.status !== 0)
      violations.add(`harnesshost verify exited ${verify.status}: ${verify.stdout}${verify.stderr}`);

    const journal = await openJournal(join(data, "journal.db"));
    let recordsVerified = 0;
    let lost = 0;
    let extra = 0;
    let maxPerCut = 0;
    let cutTurns = 0;
    const retiredUids = new Set(workers.filter((w) => w.retired).map((w) => w.uid));
    const liveUids = new Set(workers.filter((w) => !w.retired).map((w) => w.uid));
    try {
      for (const uid of await journal.allSessionUids()) allUids.add(uid);
      for (const uid of allUids) {
        const res = await journal.verify(uid);
        if (!res.ok) {
          violations.add(`${uid}: chain does not verify: ${res.message}`);
          continue;
        }
        recordsVerified += res.records;
        const records = await journal.readRange(uid);
        const byHash = new Map(records.map((r) => [r.seq, r.contentHash]));
        for (const [seq, hash] of acked.get(uid) ?? []) {
          if (byHash.get(seq) !== hash) {
            lost += 1;
            violations.add(`${uid}: acknowledged seq ${seq} is ${byHash.has(seq) ? "changed" : "missing"}`);
          }
        }
        checkExecutions(uid, records, liveUids.has(uid) && !retiredUids.has(uid), violations);
      }
      for (const exec of executions.values()) {
        const calls = model.calls.get(exec.text) ?? 0;
        const more = Math.max(0, calls - 1);
        extra += more;
        if (more > exec.cuts)
          violations.add(`execution "${exec.text}": ${calls} model calls through ${exec.cuts} cuts`);
        if (exec.cuts > 0) {
          cutTurns += 1;
          maxPerCut = Math.max(maxPerCut, more / exec.cuts);
        }
      }
    } finally {
      await journal.close();
    }
    return {
      seed: opts.seed,
      kills: cluster.kills,
      hostKills: cluster.hostKills,
      nodeKills: cluster.nodeKills,
      sessions: allUids.size,
      turnsAcknowledged: stats.turns,
      recordsAcknowledged: stats.records,
      recordsVerified,
      lost,
      resumes: stats.resumes,
      redrivenTurns: stats.redriven,
      cutTurns,
      modelCalls: model.total,
      extraModelCalls: extra,
      maxExtraModelCallsPerCut: maxPerCut,
      lostRamReported: stats.lostRam,
      forkRecoveries: stats.forks,
      violations: violations.list,
    };
  } finally {
    if (cluster.proc) await cluster.proc.kill().catch(() => undefined);
    await model.close();
    rmSync(root, { recursive: true, force: true });
  }
}

function journalRecordOf(rec: LogRecord): JournalRecord {
  if (!rec.event) throw new Error(`record ${rec.seq} has no event`);
  return {
    seq: Number(rec.seq),
    prevHash: rec.prevHash,
    contentHash: rec.contentHash,
    fence: Number(rec.fence),
    event: rec.event,
  };
}

/**
 * Per-execution facts of a finished run: at most one MODEL_CALL and one model OUTPUT per execution;
 * echo answers its input; counter outputs of completed turns count 1, 2, 3, … (never reset, never
 * repeated); a live session has no interrupted turn left.
 */
function checkExecutions(uid: string, records: readonly JournalRecord[], live: boolean, violations: Violations): void {
  const execs = projectExecutions(records);
  let count = 0;
  for (const e of execs) {
    const modelCalls = e.effects.filter((f) => f.event.kind === EventKind.EVENT_MODEL_CALL).length;
    if (modelCalls > 1) violations.add(`${uid}: execution ${e.executionId} journaled ${modelCalls} MODEL_CALLs`);
    const outputs = e.effects
      .filter((f) => f.event.kind === EventKind.EVENT_OUTPUT)
      .map((f) => (f.event.body.case === "message" ? textOf(f.event.body.value) : ""));
    if (outputs.length > 1) violations.add(`${uid}: execution ${e.executionId} journaled ${outputs.length} OUTPUTs`);
    if (!e.completed) continue;
    const input = e.inputs[0] ? textOf(e.inputs[0]) : "";
    if (e.harness === "counter" || e.harness === "counteros") {
      count += 1;
      if (outputs[0] !== String(count))
        violations.add(`${uid}: counter turn ${count} answered ${JSON.stringify(outputs)}`);
    } else if (outputs[0] !== `echo:${input}`) {
      violations.add(`${uid}: echo turn "${input}" answered ${JSON.stringify(outputs)}`);
    }
  }
  if (live && execs.at(-1) && !execs.at(-1)!.completed)
    violations.add(`${uid}: the last turn is still interrupted after the final Resume`);
}
