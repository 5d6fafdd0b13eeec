// The model-based test of hosts sharing one PostgreSQL journal: 2 or 3 `serve` processes on one schema,
// session leases on or off, and a fast-check sequence of steps. A client step sends 1–4 operations at
// once, from as many clients, to random hosts — create, exec, resume, suspend, fork, approve/deny,
// answer, cancel, delete, upgrade, and a fork racing another host's cancel; a fault step SIGKILLs and
// restarts a host (between steps, or in the middle of a client step, its calls in flight), or
// pg_terminate_backend's the hosts' lock or listening connections; a stall step
// runs a client step while one host's spawned harness nodes are stopped (SIGSTOP … SIGCONT). The
// checker (model-check.ts) reads the recorded history, the journal and every host's tool-effect file.
// Invariant: no call answers outside the tolerated codes and the checker finds nothing. Seeded:
// MODEL_MH_SEED, MODEL_MH_RUNS (CI: 3 sequences), MODEL_MH_MAX_STEPS, MODEL_MH_KEEP_GOING, MODEL_MH_PATH;
// `npm run test:model-multihost -- --runs N [--seed S] [--max-commands M]` (which keeps going past a
// failing sequence and reports every finding at the end).
import { status as GrpcStatus } from "@grpc/grpc-js";
import fc from "fast-check";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import type { Session } from "../../src/gen/agentsessions/v1/session_pb.js";
import { PIN_ANNOTATION, type PinAnnotation } from "../../src/wire/annotations.js";
import { Cluster, grpcCodeOf, PG_URL } from "./cluster.js";
import {
  cancelWasTrue,
  checkEffects,
  checkJournal,
  checkNothingStaysLocked,
  type History,
  type Known,
  LOCK_BOUND_MS,
  newHistory,
  note,
} from "./model-check.js";

const SEED = Number(process.env["MODEL_MH_SEED"] ?? 0x40);
const RUNS = Number(process.env["MODEL_MH_RUNS"] ?? 3);
const MAX_STEPS = Number(process.env["MODEL_MH_MAX_STEPS"] ?? 12);
/** One sequence of a seed again: fast-check's path, "7" for the 8th sequence. */
const PATH = process.env["MODEL_MH_PATH"];
/** Deeper runs: record every sequence's findings and go on, failing once at the end. */
const KEEP_GOING = process.env["MODEL_MH_KEEP_GOING"] === "1";
/** A sequence's budget: its steps, its faults' restarts and the final lock check, on a busy machine. */
const SEQUENCE_MS = 60_000 + LOCK_BOUND_MS;
const HARNESSES = ["echo", "ask", "counter", "askcounter", "question"] as const;

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

/** `host` indexes hosts modulo the cluster's size (2 or 3). */
type ClientOp =
  | { kind: "create"; host: number; harness: (typeof HARNESSES)[number] }
  | { kind: "exec" | "resume" | "suspend" | "cancel" | "delete" | "upgrade" | "answer"; host: number; pick: number }
  | { kind: "fork"; host: number; pick: number; count: number }
  | { kind: "decide"; host: number; pick: number; approved: boolean }
  | { kind: "forkRacingCancel"; host: number; pick: number };

type Step =
  | { kind: "clients"; ops: ClientOp[] }
  | { kind: "stall"; host: number; ms: number; ops: ClientOp[] }
  | { kind: "kill"; host: number }
  | { kind: "killDuring"; host: number; ms: number; ops: ClientOp[] }
  | { kind: "terminateBackends"; which: "lock" | "listen" };

const host = fc.nat({ max: 2 });
const pick = fc.nat({ max: 1000 });
const simple = (kind: "exec" | "resume" | "suspend" | "cancel" | "delete" | "upgrade" | "answer") =>
  fc.record({ kind: fc.constant(kind), host, pick });
const opArb: fc.Arbitrary<ClientOp> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant("create" as const), host, harness: fc.constantFrom(...HARNESSES) }),
  },
  { weight: 5, arbitrary: simple("exec") },
  { weight: 2, arbitrary: simple("resume") },
  { weight: 1, arbitrary: simple("suspend") },
  { weight: 3, arbitrary: simple("cancel") },
  { weight: 1, arbitrary: simple("delete") },
  { weight: 1, arbitrary: simple("upgrade") },
  { weight: 1, arbitrary: simple("answer") },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("fork" as const), host, pick, count: fc.integer({ min: 1, max: 3 }) }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("decide" as const), host, pick, approved: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("forkRacingCancel" as const), host, pick }) },
);
const clientOps = fc.array(opArb, { minLength: 1, maxLength: 4 });
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 12, arbitrary: fc.record({ kind: fc.constant("clients" as const), ops: clientOps }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("stall" as const),
      host,
      ms: fc.integer({ min: 100, max: 1500 }),
      ops: clientOps,
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("kill" as const), host }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("killDuring" as const),
      host,
      ms: fc.integer({ min: 0, max: 400 }),
      ops: clientOps,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("terminateBackends" as const),
      which: fc.constantFrom("lock" as const, "listen" as const),
    }),
  },
);

let cluster: Cluster | undefined;
afterEach(async () => {
  await cluster?.close();
  cluster = undefined;
});

/** Runs `call`; a tolerated refusal is tallied, anything else becomes a finding. */
async function attempt<T>(h: History, label: string, call: () => Promise<T>): Promise<T | undefined> {
  note(h, "op");
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

function adopt(h: History, harness: string, uid: string | undefined): void {
  if (uid) h.sessions.push({ uid, harness, deleted: false, waiting: false, acked: new Map() });
}

/** What an answer's Session says of the session's gate. */
function saw(target: Known, s: Session | undefined): void {
  if (s) target.waiting = s.pendingApproval !== undefined;
}

/**
 * One client's operation on its target (chosen when its step began). `alone`: no other operation of
 * the step names the same session, so what a Cancel's answer shows is the Cancel's doing.
 */
async function apply(c: Cluster, h: History, op: ClientOp, target: Known | undefined, alone: boolean): Promise<void> {
  const hp = c.host(op.host % c.hosts.length);
  if (!hp.running) return;
  if (op.kind === "create") {
    const s = await attempt(h, "create", () =>
      hp.api.create({ name: "", harness: op.harness, model: "", project: "" }),
    );
    adopt(h, op.harness, s?.metadata?.uid);
    return;
  }
  if (!target) return;
  const uid = target.uid;
  switch (op.kind) {
    case "exec": {
      const out = await attempt(h, "exec", () => hp.api.exec({ session: uid, inputs: ["go"] }));
      if (!out) return;
      saw(target, out.session);
      for (const r of out.records) target.acked.set(Number(r.seq), r.contentHash);
      if (target.harness === "counter") h.counters.push({ uid, lastSeq: out.lastSeq, output: out.output });
      return;
    }
    case "resume":
      saw(target, (await attempt(h, "resume", () => hp.api.resumeTurn(uid)))?.session);
      return;
    case "suspend":
      await attempt(h, "suspend", () => hp.api.suspend(uid));
      return;
    case "cancel": {
      const s = await attempt(h, "cancel", () => hp.api.cancel({ session: uid, reason: "model" }));
      saw(target, s);
      if (s && alone) cancelWasTrue(h, `cancel ${uid} on ${hp.name}`, s);
      return;
    }
    case "delete": {
      const s = await attempt(h, "delete", () => hp.api.delete(uid));
      if (!s) return;
      target.deleted = true;
      for (const other of c.hosts) {
        if (!other.running) continue;
        const closures = other.closures;
        const answer = await other.api.get(uid).then(
          () => ({ code: undefined, text: "" }),
          (e: unknown) => ({ code: grpcCodeOf(e), text: e instanceof Error ? e.message : String(e) }),
        );
        // A host killed while it was asked, or whose clients a kill step already closed, answers
        // nothing about the session.
        if (other.closures !== closures || SHUT_CHANNEL.test(answer.text)) continue;
        if (answer.code !== GrpcStatus.NOT_FOUND && answer.code !== GrpcStatus.UNAVAILABLE)
          h.findings.push(
            `deleted ${uid} answers ${answer.code === undefined ? "OK" : GrpcStatus[answer.code]} on ${other.name}: ${answer.text}`,
          );
      }
      return;
    }
    case "upgrade": {
      // To the version the session is pinned to (the only one a built-in serves): a re-pin through the
      // whole upgrade path (memory tier: restore, snapshot, SUSPEND).
      const s = await attempt(h, "get", () => hp.api.get(uid));
      const pin = s?.annotations[PIN_ANNOTATION];
      if (pin === undefined) return note(h, "upgrade:unpinned");
      const { version } = JSON.parse(pin) as PinAnnotation;
      await attempt(h, "upgrade", () => hp.api.upgrade({ session: uid, toVersion: version }));
      return;
    }
    case "answer":
      if (await attempt(h, "answer", () => hp.api.answer({ session: uid, text: "model" }))) target.waiting = false;
      return;
    case "fork": {
      const kids = await attempt(h, "fork", () => hp.api.fork({ session: uid, atSeq: 0, count: op.count }));
      for (const k of kids ?? []) adopt(h, target.harness, k.metadata?.uid);
      return;
    }
    case "decide": {
      const decided = await attempt(h, "decide", () =>
        hp.api.approve({ session: uid, approved: op.approved, reason: "model" }),
      );
      if (decided) target.waiting = false;
      return;
    }
    case "forkRacingCancel": {
      // One host forks the session while another cancels it.
      const b = c.host((op.host + 1) % c.hosts.length);
      if (!b.running) return;
      const [kids, s] = await Promise.all([
        attempt(h, "fork", () => hp.api.fork({ session: uid, atSeq: 0, count: 2 })),
        attempt(h, "cancel", () => b.api.cancel({ session: uid, reason: "race" })),
      ]);
      for (const k of kids ?? []) adopt(h, target.harness, k.metadata?.uid);
      if (s && alone) cancelWasTrue(h, `cancel ${uid} on ${b.name} racing a fork on ${hp.name}`, s);
      return;
    }
    default: {
      const never: never = op;
      throw new Error(`unknown op ${JSON.stringify(never)}`);
    }
  }
}

/**
 * The sessions an operation fits, by what the model knows (its harness, a pending gate, records to
 * fork at); an operation with none that fits goes to any live session (and is refused, as it should be).
 */
const FITS: Partial<Record<ClientOp["kind"], (k: Known) => boolean>> = {
  decide: (k) => k.waiting && (k.harness === "ask" || k.harness === "askcounter"),
  answer: (k) => k.waiting && k.harness === "question",
  exec: (k) => !k.waiting,
  fork: (k) => k.acked.size > 0,
  forkRacingCancel: (k) => k.acked.size > 0,
};

/** A client step: every operation at once, each from its own client call. */
async function clients(c: Cluster, h: History, ops: readonly ClientOp[]): Promise<void> {
  const live = h.sessions.filter((s) => !s.deleted);
  const targets = ops.map((op) => {
    if (!("pick" in op)) return undefined;
    const fit = FITS[op.kind];
    const pool = fit ? live.filter(fit) : [];
    const from = pool.length > 0 ? pool : live;
    return from.length > 0 ? from[op.pick % from.length] : undefined;
  });
  const named = new Map<string, number>();
  for (const t of targets) if (t) named.set(t.uid, (named.get(t.uid) ?? 0) + 1);
  if (ops.length > 1) note(h, "step:concurrent");
  await Promise.all(ops.map((op, i) => apply(c, h, op, targets[i], named.get(targets[i]?.uid ?? "") === 1)));
}

async function step(c: Cluster, h: History, s: Step): Promise<void> {
  switch (s.kind) {
    case "clients":
      return clients(c, h, s.ops);
    case "stall": {
      const hp = c.host(s.host % c.hosts.length);
      const [stalled] = await Promise.all([hp.stallNodes(s.ms), clients(c, h, s.ops)]);
      note(h, stalled > 0 ? "fault:stall" : "fault:stall-no-node");
      return;
    }
    case "kill": {
      note(h, "fault:kill");
      const hp = c.host(s.host % c.hosts.length);
      await hp.kill();
      await hp.start();
      return;
    }
    case "killDuring": {
      // The host dies `ms` into a client step, its operations in flight.
      note(h, "fault:kill-during");
      const hp = c.host(s.host % c.hosts.length);
      const kill = new Promise((resolve) => setTimeout(resolve, s.ms)).then(() => hp.kill());
      await Promise.all([clients(c, h, s.ops), kill]);
      await hp.start();
      return;
    }
    case "terminateBackends": {
      const n = await terminateBackends(c, s.which);
      note(h, n > 0 ? `fault:terminate-${s.which}` : `fault:terminate-${s.which}-none`);
      return;
    }
    default: {
      const never: never = s;
      throw new Error(`unknown step ${JSON.stringify(never)}`);
    }
  }
}

/**
 * pg_terminate_backend of the cluster's session-lock lanes (their last statement took or let go of an
 * advisory lock) or its listening connections (last statement LISTEN) — only connections of this
 * cluster's hosts (by client port), never the test's own or another test's on the same database;
 * resolves to how many it terminated.
 */
async function terminateBackends(c: Cluster, which: "lock" | "listen"): Promise<number> {
  const ports = c.hosts.flatMap((hp) => hp.pgClientPorts());
  if (ports.length === 0) return 0;
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    const pattern = which === "lock" ? "%advisory%" : "LISTEN%";
    const r = await client.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND datname = current_database() AND client_port = ANY($1::int[]) AND query ILIKE $2",
      [ports, pattern],
    );
    return r.rowCount ?? 0;
  } finally {
    await client.end();
  }
}

describe("hosts sharing PostgreSQL, model-based", () => {
  it(
    "concurrentClientsAndFaultsOnTwoOrThreeHostsKeepEveryInvariant",
    async () => {
      const totals = new Map<string, number>();
      const found: string[] = [];
      let sequences = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 2, max: 3 }),
          fc.boolean(),
          fc.array(stepArb, { minLength: 4, maxLength: MAX_STEPS }),
          async (size, leases, steps) => {
            cluster = await Cluster.start(size, leases ? "" : "&session_lease_ms=0");
            const h = newHistory();
            try {
              await apply(cluster, h, { kind: "create", host: 0, harness: "askcounter" }, undefined, true);
              for (const s of steps) await step(cluster, h, s);
              for (const hp of cluster.hosts) if (!hp.running) await hp.start();
              await checkNothingStaysLocked(cluster, h);
              await checkJournal(await cluster.journal(), h);
              checkEffects(
                cluster.hosts.map((hp) => hp.dataDir),
                h,
              );
            } finally {
              sequences += 1;
              for (const [k, v] of h.tally) totals.set(k, (totals.get(k) ?? 0) + v);
              await cluster.close();
              cluster = undefined;
            }
            const where = `${size} hosts, leases ${leases ? "on" : "off"}; steps ${JSON.stringify(steps)}`;
            if (KEEP_GOING) {
              for (const f of h.findings) found.push(`sequence ${sequences}: ${f} (${where})`);
              for (const f of h.findings) console.info(`model-multihost sequence ${sequences} finding: ${f}`);
              console.info(
                `model-multihost sequence ${sequences}: ${size} hosts, leases ${leases ? "on" : "off"}, ${h.findings.length} findings`,
                JSON.stringify(Object.fromEntries([...h.tally].sort())),
              );
              return;
            }
            expect(h.findings, where).toEqual([]);
          },
        ),
        { seed: SEED, numRuns: RUNS, endOnFailure: true, ...(PATH !== undefined ? { path: PATH } : {}) },
      );
      console.info(
        `model-multihost seed=${SEED}: ${sequences} sequences, ${found.length} findings`,
        JSON.stringify(Object.fromEntries([...totals].sort())),
      );
      expect(found).toEqual([]);
    },
    RUNS * SEQUENCE_MS,
  );
});
