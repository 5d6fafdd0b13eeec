// The model-based test of hosts sharing one PostgreSQL journal (issue 40): two `serve` processes on one
// schema, session leases on or off, and a fast-check sequence of operations sent to random hosts —
// create, exec, resume, suspend, fork, approve/deny, cancel, delete, a fork racing a cancel from the
// other host — with faults between them (SIGKILL and restart of a host; pg_terminate_backend of the
// hosts' lock and listening connections). The checker reads the recorded history and the journal:
// no call answers outside the tolerated codes, every record a client saw acknowledged is still there
// with its hash, every chain verifies with fences never going backwards, at most one decision per gate
// and one receipt per tool call, every answered Cancel is true when read back (nothing running, no own
// wait left pending), a deleted session is NOT_FOUND on every host, and no session stays locked once
// the hosts are up (a Cancel on each answers within the lease/handover bounds). Seeded: MODEL_MH_SEED,
// MODEL_MH_RUNS (CI: 4 sequences), MODEL_MH_MAX_OPS; `npm run test:model-multihost -- --runs N`.
import { status as GrpcStatus } from "@grpc/grpc-js";
import fc from "fast-check";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { EventKind } from "../../src/gen/agentsessions/v1/common_pb.js";
import { ExecState, type Session } from "../../src/gen/agentsessions/v1/session_pb.js";
import { Cluster, eventually, grpcCodeOf, PG_URL } from "./cluster.js";

const SEED = Number(process.env["MODEL_MH_SEED"] ?? 0x40);
const RUNS = Number(process.env["MODEL_MH_RUNS"] ?? 4);
const MAX_OPS = Number(process.env["MODEL_MH_MAX_OPS"] ?? 24);
const HOSTS = 2;
const HARNESSES = ["echo", "ask", "counter", "askcounter"] as const;

/** Codes a racing or faulted cluster may answer with; anything else is a finding. */
const TOLERATED = new Set([
  GrpcStatus.ABORTED,
  GrpcStatus.FAILED_PRECONDITION,
  GrpcStatus.UNAVAILABLE,
  GrpcStatus.CANCELLED,
  GrpcStatus.NOT_FOUND,
  GrpcStatus.DEADLINE_EXCEEDED,
]);
const SHUT_CHANNEL = /Channel has been shut down|No connection established|Connection dropped/;

type Op =
  | { kind: "create"; host: number; harness: (typeof HARNESSES)[number] }
  | { kind: "exec" | "resume" | "suspend" | "cancel" | "delete"; host: number; pick: number }
  | { kind: "fork"; host: number; pick: number; count: number }
  | { kind: "decide"; host: number; pick: number; approved: boolean }
  | { kind: "forkRacingCancel"; host: number; pick: number }
  | { kind: "kill"; host: number }
  | { kind: "terminateBackends"; which: "lock" | "listen" };

const host = fc.integer({ min: 0, max: HOSTS - 1 });
const pick = fc.nat({ max: 1000 });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant("create" as const), host, harness: fc.constantFrom(...HARNESSES) }),
  },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant("exec" as const), host, pick }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("resume" as const), host, pick }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("suspend" as const), host, pick }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("cancel" as const), host, pick }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("delete" as const), host, pick }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("fork" as const), host, pick, count: fc.integer({ min: 1, max: 3 }) }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("decide" as const), host, pick, approved: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("forkRacingCancel" as const), host, pick }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("kill" as const), host }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("terminateBackends" as const),
      which: fc.constantFrom("lock" as const, "listen" as const),
    }),
  },
);

/** What the test knows of one session. */
interface Known {
  readonly uid: string;
  deleted: boolean;
  /** seq → content hash of every record a client was answered with. */
  readonly acked: Map<number, string>;
}

interface History {
  readonly sessions: Known[];
  readonly findings: string[];
  readonly tally: Map<string, number>;
}

let cluster: Cluster | undefined;
afterEach(async () => {
  await cluster?.close();
  cluster = undefined;
});

function note(h: History, what: string): void {
  h.tally.set(what, (h.tally.get(what) ?? 0) + 1);
}

/** Runs `call`; a tolerated refusal is tallied, anything else becomes a finding. */
async function attempt<T>(h: History, label: string, call: () => Promise<T>): Promise<T | undefined> {
  try {
    const value = await call();
    note(h, `${label}:ok`);
    return value;
  } catch (err) {
    const code = grpcCodeOf(err);
    const text = err instanceof Error ? err.message : String(err);
    // A fork of a session with no records yet is bad input (nothing to fork at), refused as such.
    const tolerated = TOLERATED.has(code ?? -1) || (label === "fork" && code === GrpcStatus.INVALID_ARGUMENT);
    if (code !== undefined && tolerated) {
      note(h, `${label}:${GrpcStatus[code]}`);
      return undefined;
    }
    if (SHUT_CHANNEL.test(text)) {
      note(h, `${label}:channel`);
      return undefined;
    }
    h.findings.push(`${label} answered ${code === undefined ? "" : GrpcStatus[code]} ${text}`);
    return undefined;
  }
}

/** Rule §17.1: a Cancel answered OK left nothing running and no own wait pending. */
function cancelWasTrue(h: History, label: string, s: Session): void {
  if (s.execState === ExecState.EXEC_RUNNING) h.findings.push(`${label}: Cancel answered OK but the turn still runs`);
  const gate = s.pendingApproval;
  if (gate && gate.requestSeq > s.forkSeq)
    h.findings.push(`${label}: Cancel answered OK but its own wait (request seq ${gate.requestSeq}) is still pending`);
}

function ack(k: Known, records: readonly { seq: bigint; contentHash: string }[]): void {
  for (const r of records) k.acked.set(Number(r.seq), r.contentHash);
}

async function apply(c: Cluster, h: History, op: Op): Promise<void> {
  const live = h.sessions.filter((s) => !s.deleted);
  const target = "pick" in op && live.length > 0 ? live[op.pick % live.length] : undefined;
  const hostOf = (i: number) => c.host(i);
  switch (op.kind) {
    case "create": {
      const hp = hostOf(op.host);
      if (!hp.running) return;
      const s = await attempt(h, "create", () =>
        hp.api.create({ name: "", harness: op.harness, model: "", project: "" }),
      );
      const uid = s?.metadata?.uid;
      if (uid) h.sessions.push({ uid, deleted: false, acked: new Map() });
      return;
    }
    case "exec": {
      const hp = hostOf(op.host);
      if (!target || !hp.running) return;
      const out = await attempt(h, "exec", () => hp.api.exec({ session: target.uid, inputs: ["go"] }));
      if (out) ack(target, out.records);
      return;
    }
    case "resume": {
      const hp = hostOf(op.host);
      if (!target || !hp.running) return;
      await attempt(h, "resume", () => hp.api.resume(target.uid));
      return;
    }
    case "suspend": {
      const hp = hostOf(op.host);
      if (!target || !hp.running) return;
      await attempt(h, "suspend", () => hp.api.suspend(target.uid));
      return;
    }
    case "cancel": {
      const hp = hostOf(op.host);
      if (!target || !hp.running) return;
      const s = await attempt(h, "cancel", () => hp.api.cancel({ session: target.uid, reason: "model" }));
      if (s) cancelWasTrue(h, `cancel ${target.uid} on ${hp.name}`, s);
      return;
    }
    case "delete": {
      const hp = hostOf(op.host);
      if (!target || !hp.running) return;
      const s = await attempt(h, "delete", () => hp.api.delete(target.uid));
      if (!s) return;
      target.deleted = true;
      for (const other of c.hosts) {
        if (!other.running) continue;
        const code = await other.api.get(target.uid).then(
          () => undefined,
          (e: unknown) => grpcCodeOf(e),
        );
        if (code !== GrpcStatus.NOT_FOUND)
          h.findings.push(
            `deleted ${target.uid} answers ${code === undefined ? "OK" : GrpcStatus[code]} on ${other.name}`,
          );
      }
      return;
    }
    case "fork": {
      const hp = hostOf(op.host);
      if (!target || !hp.running) return;
      const kids = await attempt(h, "fork", () => hp.api.fork({ session: target.uid, atSeq: 0, count: op.count }));
      for (const k of kids ?? [])
        if (k.metadata?.uid) h.sessions.push({ uid: k.metadata.uid, deleted: false, acked: new Map() });
      return;
    }
    case "decide": {
      const hp = hostOf(op.host);
      if (!target || !hp.running) return;
      await attempt(h, "decide", () => hp.api.approve({ session: target.uid, approved: op.approved, reason: "model" }));
      return;
    }
    case "forkRacingCancel": {
      // The case: one host forks the session while the other cancels it.
      const a = hostOf(op.host);
      const b = hostOf((op.host + 1) % HOSTS);
      if (!target || !a.running || !b.running) return;
      const [kids, s] = await Promise.all([
        attempt(h, "fork", () => a.api.fork({ session: target.uid, atSeq: 0, count: 2 })),
        attempt(h, "cancel", () => b.api.cancel({ session: target.uid, reason: "race" })),
      ]);
      for (const k of kids ?? [])
        if (k.metadata?.uid) h.sessions.push({ uid: k.metadata.uid, deleted: false, acked: new Map() });
      if (s) cancelWasTrue(h, `cancel ${target.uid} on ${b.name} racing a fork on ${a.name}`, s);
      return;
    }
    case "kill": {
      const hp = hostOf(op.host);
      note(h, "fault:kill");
      await hp.kill();
      await hp.start();
      return;
    }
    case "terminateBackends": {
      note(h, `fault:terminate-${op.which}`);
      await terminateBackends(c.schema, op.which);
      return;
    }
    default: {
      const never: never = op;
      throw new Error(`unknown op ${JSON.stringify(never)}`);
    }
  }
}

/**
 * pg_terminate_backend of the hosts' session-lock lanes (their last statement took or let go of an
 * advisory lock) or their listening connections (last statement LISTEN), never the test's own.
 */
async function terminateBackends(schema: string, which: "lock" | "listen"): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    const pattern = which === "lock" ? "%advisory%" : "LISTEN%";
    await client.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND datname = current_database() AND query ILIKE $1",
      [pattern],
    );
  } finally {
    await client.end();
  }
  void schema;
}

/** The checker over the journal once the sequence ran (every host up). */
async function checkJournal(c: Cluster, h: History): Promise<void> {
  const journal = await c.journal();
  for (const k of h.sessions) {
    const info = await journal.getSession(k.uid);
    if (k.deleted) {
      if (info) h.findings.push(`deleted ${k.uid} is still in the journal`);
      continue;
    }
    if (!info) {
      h.findings.push(`${k.uid} vanished from the journal without a Delete`);
      continue;
    }
    const verdict = await journal.verify(k.uid);
    if (!verdict.ok) h.findings.push(`${k.uid} does not verify: ${JSON.stringify(verdict)}`);
    const records = await journal.readRange(k.uid);
    const bySeq = new Map(records.map((r) => [r.seq, r.contentHash]));
    for (const [seq, hash] of k.acked)
      if (bySeq.get(seq) !== hash) h.findings.push(`${k.uid}: acknowledged seq ${seq} is lost or changed`);
    const own = records.filter((r) => r.seq > info.forkSeq);
    for (let i = 1; i < own.length; i++)
      if (own[i]!.fence < own[i - 1]!.fence) h.findings.push(`${k.uid}: fence goes backwards at seq ${own[i]!.seq}`);
    const decisions = new Map<string, number>();
    const receipts = new Map<string, number>();
    for (const r of own) {
      const body = r.event.body;
      if (body.case === "approvalResult") {
        const key = String(body.value.requestSeq);
        decisions.set(key, (decisions.get(key) ?? 0) + 1);
      }
      if (r.event.kind === EventKind.EVENT_TOOL_RESULT && body.case === "result") {
        const key = `${r.event.executionId}/${body.value.id}`;
        receipts.set(key, (receipts.get(key) ?? 0) + 1);
      }
    }
    for (const [gate, n] of decisions) if (n > 1) h.findings.push(`${k.uid}: gate ${gate} decided ${n} times`);
    for (const [call, n] of receipts) if (n > 1) h.findings.push(`${k.uid}: tool call ${call} receipted ${n} times`);
  }
}

/** No session stays locked once every host is up: a Cancel on each answers OK or a truthful refusal in bounds. */
async function checkNothingStaysLocked(c: Cluster, h: History): Promise<void> {
  const asker = c.host(0);
  for (const k of h.sessions.filter((s) => !s.deleted)) {
    await eventually(
      `${k.uid} is free again`,
      async () => {
        try {
          const s = await asker.api.cancel({ session: k.uid, reason: "final" });
          cancelWasTrue(h, `final cancel ${k.uid}`, s);
          return true;
        } catch (err) {
          const code = grpcCodeOf(err);
          // A decided wait is refused for good (FAILED_PRECONDITION): the session is not locked.
          if (code === GrpcStatus.FAILED_PRECONDITION) return true;
          if (code === GrpcStatus.ABORTED || code === GrpcStatus.UNAVAILABLE) return false;
          h.findings.push(`final cancel ${k.uid}: ${err instanceof Error ? err.message : String(err)}`);
          return true;
        }
      },
      45_000,
    );
  }
}

describe("hosts sharing PostgreSQL, model-based", () => {
  it("randomOperationsAndFaultsOnTwoHostsKeepEveryInvariant", async () => {
    const totals = new Map<string, number>();
    let sequences = 0;
    await fc.assert(
      fc.asyncProperty(fc.boolean(), fc.array(opArb, { minLength: 6, maxLength: MAX_OPS }), async (leases, ops) => {
        cluster = await Cluster.start(HOSTS, leases ? "" : "&session_lease_ms=0");
        const h: History = { sessions: [], findings: [], tally: new Map() };
        try {
          await apply(cluster, h, { kind: "create", host: 0, harness: "askcounter" });
          for (const op of ops) await apply(cluster, h, op);
          for (const hp of cluster.hosts) if (!hp.running) await hp.start();
          await checkNothingStaysLocked(cluster, h);
          await checkJournal(cluster, h);
        } finally {
          sequences += 1;
          for (const [k, v] of h.tally) totals.set(k, (totals.get(k) ?? 0) + v);
          await cluster.close();
          cluster = undefined;
        }
        expect(h.findings, `leases ${leases ? "on" : "off"}; ops ${JSON.stringify(ops)}`).toEqual([]);
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    console.info(`model-multihost: ${sequences} sequences`, Object.fromEntries([...totals].sort()));
  }, 600_000);
});
