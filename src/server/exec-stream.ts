// Sessions.Exec as a stream of ExecUpdates. Invariants: the Session frame is always first (even when
// the turn then fails); every record the turn commits is streamed once, in seq order, as soon as it is
// appended; a failure after the Session frame is the stream's status; the turn is aborted when the
// client goes away or `deadline_unix` passes, and the handler never returns before the turn settled. A
// turn that parks on an approval ends OK with a final Session frame carrying pending_approval. A
// session the Exec created is removed again if the turn ends without a single record (refused). An
// Exec without inputs on a session whose own gate is decided but whose turn has not continued recovers
// that turn (Resume's path, its records streamed), as the reference does; with inputs it is refused.
// A negotiated update shape (§20) changes only what is added or left out: `records` drops the delta
// frames, and either shape ends the stream with exactly one Session frame of the session after the turn
// (the parked turn's final frame is that frame); without one the stream is the reference's, unchanged.
// `final` sends neither the opening Session frame nor deltas: once the turn settled, its records and the
// closing Session frame, each encoded exactly as the `records` shape would send it, packed into few
// messages (wire/exec-updates.ts).
import { followAbort } from "../abort.js";
import { NO_CONTEXT, type OpContext } from "../obs/context.js";
import { ErrorCode, HostError } from "../errors/index.js";
import type { ExecRequest, ExecUpdate } from "../gen/agentsessions/v1/session_pb.js";
import type { Host } from "../host/host.js";
import { checkSessionHarness } from "../host/harness-rule.js";
import { servedSession } from "../host/served-session.js";
import { sessionProto, sessionView } from "../host/session-proto.js";
import type { JournalRecord, SessionInfo } from "../journal/types.js";
import { AsyncQueue, EncodedResponse } from "../wire/index.js";
import { overLimit } from "../limits/index.js";
import { eventBytes } from "../wire/event-bytes.js";
import { packFrames, type ExecUpdateShape } from "../wire/exec-updates.js";
import { toBinary } from "@bufbuild/protobuf";
import { ExecUpdateSchema } from "../gen/agentsessions/v1/session_pb.js";
import { int64 } from "./checks.js";
import { checkExecInputs, optionalId } from "./edge-limits.js";
import { deltaUpdate, recordUpdate, sessionUpdate } from "./record-proto.js";
import { StreamBudget } from "./stream-budget.js";

/** Bytes an update frame adds around its event (seq, hashes, fence, framing), for streamBufferBytes. */
const RECORD_OVERHEAD = 256;

/** Longest timer Node can arm (ms); a later deadline is left to the caller's own gRPC deadline. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** deadline_unix above this (year ~5138) is refused as nonsense. */
const MAX_DEADLINE_UNIX = 100_000_000_000;

interface ExecPlan {
  readonly expectedLastSeq: number | undefined;
  readonly resumeFromSeq: number;
  /** ms since the epoch, or undefined for no turn deadline. */
  readonly deadlineMs: number | undefined;
}

function planOf(host: Host, req: ExecRequest): ExecPlan {
  optionalId(host.limits, req.session, "session");
  optionalId(host.limits, req.harness, "harness");
  checkExecInputs(host.limits, req.inputs, req.config);
  const expectedLastSeq =
    req.expectedLastSeq === undefined ? undefined : int64(req.expectedLastSeq, "expected_last_seq");
  const resumeFromSeq = int64(req.resumeFromSeq, "resume_from_seq");
  const deadlineUnix = int64(req.deadlineUnix, "deadline_unix", 0, MAX_DEADLINE_UNIX);
  const deadlineMs = deadlineUnix === 0 ? undefined : deadlineUnix * 1000;
  if (deadlineMs !== undefined && deadlineMs <= Date.now()) {
    throw new HostError(ErrorCode.DeadlineExceeded, "deadline_unix is already in the past");
  }
  return { expectedLastSeq, resumeFromSeq, deadlineMs };
}

/** The session a turn runs on: its uid, and its row when the edge read it (Target). */
interface Target {
  readonly uid: string;
  /** Read at the edge; absent for a `final` turn on an existing session that needs nothing from it. */
  readonly info: SessionInfo | undefined;
}

/**
 * The session the turn runs on. A `final` Exec with inputs on an existing session, naming no harness,
 * reads nothing here: it sends no opening Session frame, and the turn's one read under the hold makes
 * the same project check (NOT_FOUND) — so the row is read once per turn, not twice.
 */
async function target(
  host: Host,
  req: ExecRequest,
  ctx: OpContext,
  project: string,
  shape: ExecUpdateShape | undefined,
): Promise<Target> {
  if (shape === "final" && req.session !== "" && req.harness === "" && req.inputs.length > 0)
    return { uid: req.session, info: undefined };
  const info = await targetSession(host, req, ctx, project);
  return { uid: info.uid, info };
}

/**
 * The session the turn runs on: auto-created with `harness` when `session` is empty; otherwise the
 * existing one, whose harness a turn cannot change (checkSessionHarness).
 */
async function targetSession(host: Host, req: ExecRequest, ctx: OpContext, project: string): Promise<SessionInfo> {
  if (req.session === "") return host.createSession({ harness: req.harness, ...(project !== "" ? { project } : {}) });
  const info = await host.placer.session(req.session, ctx);
  checkSessionHarness(info, req.harness);
  return info;
}

/**
 * The Exec stream of `req`. `ctx.projects` limits the existing session it may name (NOT_FOUND outside
 * them); `project` is where a session it creates goes ("" the host's default).
 */
export async function* execUpdates(
  host: Host,
  req: ExecRequest,
  callSignal: AbortSignal,
  ctx: OpContext = NO_CONTEXT,
  project = "",
  shape?: ExecUpdateShape,
): AsyncGenerator<ExecUpdate | EncodedResponse> {
  const plan = planOf(host, req);
  const on = await target(host, req, ctx, project, shape);
  let completed = false;
  try {
    if (shape === "final") yield* finalUpdates(host, req, plan, on, callSignal, ctx);
    else yield* turnUpdates(host, req, plan, on, callSignal, ctx, shape);
    completed = true;
  } finally {
    // A session this Exec created for a turn that was refused, failed or was cancelled before its
    // first record is removed again: a refused Exec leaves no session behind.
    if (req.session === "" && !completed) await host.discardEmptySession(on.uid).catch(() => false);
  }
}

/** A turn started for an Exec stream: its outcome, and the signal plumbing to release once it settled. */
interface StartedTurn {
  readonly run: Promise<{ records: readonly JournalRecord[]; parked?: unknown }>;
  /** The turn's one signal (aborted when the call goes, when deadline_unix passes, or by `abort`). */
  readonly signal: AbortSignal;
  abort(reason: unknown): void;
  /** The turn's failure as the stream reports it (DEADLINE_EXCEEDED once deadline_unix passed). */
  failure(err: unknown): unknown;
  /** Stops following the call and clears the deadline timer (call once the turn settled). */
  release(): void;
}

/**
 * Starts the turn (or, without inputs, the decided turn Resume would run). Its one signal is aborted
 * when the call goes (a listener on callSignal, removed by `release`), when deadline_unix passes, or
 * by `abort` (the stream closed before the turn ended).
 */
async function startTurn(
  host: Host,
  req: ExecRequest,
  plan: ExecPlan,
  uid: string,
  callSignal: AbortSignal,
  ctx: OpContext,
  observer: TurnObserver | undefined,
): Promise<StartedTurn> {
  const local = new AbortController();
  const signal = local.signal;
  let deadlinePassed = false;
  const unfollowCall = followAbort(callSignal, local);
  const timer = armDeadline(plan.deadlineMs, () => {
    deadlinePassed = true;
    if (!signal.aborted) local.abort(new HostError(ErrorCode.DeadlineExceeded, "turn deadline exceeded"));
  });
  const release = (): void => {
    clearTimeout(timer);
    unfollowCall();
  };
  let recovering: boolean;
  try {
    recovering = req.inputs.length === 0 && (await decidedTurnWaiting(host, uid));
  } catch (err) {
    release();
    throw err;
  }
  const run: StartedTurn["run"] = recovering
    ? host.placer.resume(uid, signal, observer, ctx, plan.expectedLastSeq).then((r) => ({
        records: [...(r.turn?.records ?? []), r.record].sort((a, b) => a.seq - b.seq),
        ...(r.parked ? { parked: r.parked } : {}),
      }))
    : host.placer.exec({
        session: uid,
        inputs: req.inputs,
        ...(plan.expectedLastSeq !== undefined ? { expectedLastSeq: plan.expectedLastSeq } : {}),
        ...(req.config.length > 0 ? { config: req.config } : {}),
        ...(plan.resumeFromSeq > 0 ? { resumeFromSeq: plan.resumeFromSeq } : {}),
        ...(observer !== undefined ? { observer } : {}),
        signal,
        ctx,
      });
  return {
    run,
    signal,
    abort(reason) {
      if (!signal.aborted) local.abort(reason);
    },
    failure: (err) =>
      deadlinePassed
        ? new HostError(ErrorCode.DeadlineExceeded, "turn deadline (deadline_unix) exceeded", { cause: err })
        : err,
    release,
  };
}

interface TurnObserver {
  onRecord(rec: JournalRecord): void;
  onDelta(executionId: string, chunk: string, done: boolean): void;
}

/**
 * `final` (§20 rules 2, 6, 8): nothing is sent while the turn runs; once it settled, its records and
 * the closing Session frame, each encoded as the `records` shape would send it, packed. Nothing waits
 * in a queue for the client meanwhile, so no stream buffer is held.
 */
async function* finalUpdates(
  host: Host,
  req: ExecRequest,
  plan: ExecPlan,
  on: Target,
  callSignal: AbortSignal,
  ctx: OpContext,
): AsyncGenerator<EncodedResponse> {
  const { uid, info } = on;
  /** The head before the turn (0 when the edge did not read it: then every record is the turn's own). */
  const headBefore = info?.lastSeq ?? 0;
  const turn = await startTurn(host, req, plan, uid, callSignal, ctx, undefined);
  let result: Awaited<StartedTurn["run"]>;
  try {
    result = await turn.run;
  } catch (err) {
    throw turn.failure(err);
  } finally {
    turn.release();
  }
  const frames = result.records.filter((rec) => rec.seq > headBefore).map(recordUpdate);
  frames.push(sessionUpdate(await servedSession(host, uid)));
  const encoded = frames.map((frame) => toBinary(ExecUpdateSchema, frame));
  let at = 0;
  for (const { bytes, frames: count } of packFrames(encoded)) {
    yield new EncodedResponse(bytes, frames.slice(at, at + count));
    at += count;
  }
}

async function* turnUpdates(
  host: Host,
  req: ExecRequest,
  plan: ExecPlan,
  on: Target,
  callSignal: AbortSignal,
  ctx: OpContext,
  shape: "all" | "records" | undefined,
): AsyncGenerator<ExecUpdate> {
  const { uid, info } = on;
  /** The head before the turn (0 when the edge did not read it: then every record is the turn's own). */
  const headBefore = info?.lastSeq ?? 0;
  if (info !== undefined) yield sessionUpdate(sessionProto(info));

  const updates = new AsyncQueue<ExecUpdate>();
  // streamBufferBytes: what waits here for a client that is not reading. Past the limit the queue is
  // dropped and the stream ends RESOURCE_EXHAUSTED once the client reads again; the turn goes on and
  // commits (the client can Replay it), so a stalled reader neither holds memory nor wedges the session.
  // The host-wide budget (streamBufferTotalBytes) may cut this stream the same way when the streams
  // together hold too much and this one holds the most.
  const limit = host.limits.streamBufferBytes;
  const sizes: number[] = [];
  let cut: HostError | undefined;
  const cutOff = (err: HostError): void => {
    cut = err;
    updates.discard(err);
    sizes.length = 0;
  };
  const share = budgetOf(host).open(cutOff);
  const offer = (update: ExecUpdate, bytes: number): void => {
    if (cut !== undefined || updates.closed) return;
    if (share.held + bytes > limit) {
      const err = overLimit(
        "streamBufferBytes",
        limit,
        share.held + bytes,
        "Exec updates waiting for a client that is not reading",
      );
      share.close();
      cutOff(err);
      return;
    }
    sizes.push(bytes);
    updates.offer(update);
    share.hold(bytes);
  };
  let lastStreamed = 0;
  let settled = false;
  const observer: TurnObserver = {
    onRecord(rec: JournalRecord) {
      lastStreamed = Math.max(lastStreamed, rec.seq);
      offer(recordUpdate(rec), RECORD_OVERHEAD + eventBytes(rec.event));
    },
    onDelta(executionId: string, chunk: string, done: boolean) {
      if (shape === "records") return;
      offer(deltaUpdate(executionId, chunk, done), RECORD_OVERHEAD + chunk.length * 3);
    },
  };
  let started: StartedTurn;
  try {
    started = await startTurn(host, req, plan, uid, callSignal, ctx, observer);
  } catch (err) {
    share.close();
    throw err;
  }
  const turn = started.run
    .then(
      async (result) => {
        settled = true; // the turn is over: closing the stream from here on must not abort anything
        // The journal stays authoritative: anything the observer did not report is sent now.
        for (const rec of result.records) {
          if (rec.seq > lastStreamed && rec.seq > headBefore)
            offer(recordUpdate(rec), RECORD_OVERHEAD + eventBytes(rec.event));
        }
        try {
          if (shape !== undefined) updates.offer(sessionUpdate(await servedSession(host, uid)));
          else if (result.parked)
            updates.offer(sessionUpdate(await sessionView(host.placer, await host.getSession(uid))));
          updates.end();
        } catch (err) {
          updates.fail(err);
        }
      },
      (err: unknown) => {
        settled = true;
        updates.fail(started.failure(err));
      },
    )
    .finally(() => {
      settled = true;
      started.release();
    });
  try {
    for await (const update of updates) {
      share.release(sizes.shift() ?? 0);
      yield update;
    }
  } finally {
    share.close();
    if (!settled && cut === undefined && !started.signal.aborted)
      started.abort(new HostError(ErrorCode.Cancelled, "Exec stream closed before the turn ended"));
    await turn;
  }
  if (cut !== undefined) throw cut;
}

const budgets = new WeakMap<Host, StreamBudget>();
/** The host's one budget for bytes held for all its Exec and turn streams (streamBufferTotalBytes). */
export function budgetOf(host: Host): StreamBudget {
  let budget = budgets.get(host);
  if (budget === undefined) {
    budget = new StreamBudget(host.limits.streamBufferTotalBytes);
    budgets.set(host, budget);
  }
  return budget;
}

/** Bytes the host holds now for all its Exec streams' clients that are not reading (tests, metrics). */
export function heldStreamBytes(host: Host): number {
  return budgetOf(host).held;
}

/** Whether the session's own gate is decided and its turn has not continued (what Resume runs). */
async function decidedTurnWaiting(host: Host, uid: string): Promise<boolean> {
  return (await host.placer.sessionLog(uid)).ownUnreceiptedGate()?.state === "decided";
}

function armDeadline(deadlineMs: number | undefined, onDeadline: () => void): NodeJS.Timeout | undefined {
  if (deadlineMs === undefined) return undefined;
  const ms = deadlineMs - Date.now();
  if (ms > MAX_TIMER_MS) return undefined;
  const timer = setTimeout(onDeadline, Math.max(0, ms));
  timer.unref();
  return timer;
}
