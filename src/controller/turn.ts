// One turn of a session (docs/protocol.md §5.4): the live execution, deterministic replay, and the resume re-drive
// of an interrupted turn. Invariants: the append order is EXECUTION_START, INPUT×n, the harness's
// effects in emission order, then END{COMPLETED} or ERROR; replay is read-only and never invokes the
// model (I1, I5); resume serves what was recorded before anything runs live.
import { inputHashFormOf } from "../canon/index.js";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { EventKind, type Event, type IdentityRef, type Message } from "../gen/agentsessions/v1/common_pb.js";
import type { HarnessDescriptor } from "../gen/agentsessions/v1/harness_pb.js";
import { ErrorCode, grpcStatusOf, HostError, isHostError } from "../errors/index.js";
import { recordedVersion } from "../journal/pin.js";
import type { JournalRecord } from "../journal/types.js";
import type { ModelProvider } from "../model/types.js";
import { classifyFailure, type FailureClass } from "../model/types.js";
import type { Harness, StartInfo } from "../harness/types.js";
import { clipForLog, type Log, NO_LOG } from "../obs/op-log.js";
import { isApprovalParked, type ApprovalRef } from "./approvals.js";
import { ev } from "./events.js";
import { newExecutionId } from "./ids.js";
import { liveSink } from "./live-sink.js";
import { SessionLog, type PendingTurn, type RecordedExecution } from "../projection/session-log.js";
import { DivergedError, ServingEffects, servingSink } from "./serving-sink.js";
import { boundedRun } from "./bounded-run.js";
import { SinkGuard } from "./sink-guard.js";
import { TurnContext, type ControllerDeps } from "./turn-context.js";
import { TurnCancelled } from "./turn-cancelled.js";
import { turnDeadline } from "./turn-deadline.js";

/** The harness a turn runs, as admitted by placement. */
export interface HarnessBinding {
  readonly harness: Harness;
  /** Registry name, recorded in EXECUTION_START. */
  readonly name: string;
  readonly descriptor: HarnessDescriptor;
  /** The build digest recorded with the version in EXECUTION_START ("" or absent: unknown). */
  readonly digest?: string;
}

export interface TurnResult {
  readonly executionId: string;
  /** Text of every OUTPUT of the turn, in order (served or live). */
  readonly outputs: readonly string[];
  /** Records this call appended. */
  readonly records: readonly JournalRecord[];
  readonly lastSeq: number;
  /** Set when the turn parked on an undecided approval gate (no END, no ERROR was appended). */
  readonly parked?: ApprovalRef;
}

/** How a turn's failure classifies: expected (retryable where it happened), defect, interrupt. */
export function classifyTurnFailure(err: unknown): FailureClass {
  return classifyFailure(err);
}

export interface ExecParams {
  readonly session: string;
  readonly binding: HarnessBinding;
  readonly fence: number;
  readonly inputs: readonly Message[];
  /** CAS on the head; default: the head read at the start. */
  readonly expectedLastSeq?: number;
  readonly config?: Uint8Array;
  readonly resumeFromSeq?: number;
  /**
   * Prior events handed to the harness. Default: every prior journal event. Placement passes []
   * for a memory actor (I4: a restored or live actor already holds that history).
   */
  readonly history?: readonly Event[];
  /**
   * With `history`: the seq that history begins after (the last compaction's through_seq, §16; default
   * 0). Without it, the turn windows the journal itself.
   */
  readonly historyBase?: number;
  /** The session's recorded principal, handed to the harness as Start.identity (provenance only). */
  readonly identity?: IdentityRef;
  /** The call's x-request-id, handed to the harness as Start.requestId (diagnostics only). */
  readonly requestId?: string;
  /** Who the host verified asked for the turn: the actor of its EXECUTION_START (docs/protocol.md §19). */
  readonly actor?: IdentityRef;
  /**
   * The turn's execution id, when placement minted it (so its own lines, the runtime's and the
   * controller's carry the same `turn`); default: a fresh one.
   */
  readonly executionId?: string;
  /** The operation's logger (request_id, session, harness, turn bound); default: nowhere. */
  readonly logger?: Log;
  /**
   * The session's head seq as the caller read it while holding the session, with nothing appended
   * since (placement's verified window); default: the head is read here. The first append's CAS is on it
   * either way.
   */
  readonly headSeq?: number;
  readonly signal: AbortSignal;
}

const ABORTING = new Set<string>([ErrorCode.Conflict, ErrorCode.Fenced, ErrorCode.SessionBusy]);

function describeFailure(err: unknown): { code: number; description: string } {
  if (isHostError(err)) return { code: grpcStatusOf(err.code), description: err.message };
  if (err instanceof Error) return { code: GrpcStatus.UNKNOWN, description: err.message };
  return { code: GrpcStatus.UNKNOWN, description: String(err) };
}

function asTurnError(err: unknown, signal: AbortSignal): HostError {
  if (
    isHostError(err) &&
    (ABORTING.has(err.code) ||
      err.code === ErrorCode.Diverged ||
      err.code === ErrorCode.InvalidArgument ||
      err.code === ErrorCode.FailedPrecondition ||
      err.code === ErrorCode.PermissionDenied ||
      err.code === ErrorCode.ResourceExhausted)
  ) {
    return err;
  }
  // A node call's own deadline (historyUploadMs, snapshotMs…) names its limit; it stays a deadline.
  if (isHostError(err) && err.code === ErrorCode.DeadlineExceeded && !signal.aborted)
    return new HostError(ErrorCode.DeadlineExceeded, `${err.message}; the turn is resumable`, { cause: err });
  if (signal.aborted) {
    const reason: unknown = signal.reason;
    // A host deadline (e.g. the turn's turnMs) names itself.
    if (isHostError(reason) && reason.code === ErrorCode.DeadlineExceeded)
      return new HostError(ErrorCode.DeadlineExceeded, `${reason.message}; the turn is resumable`, { cause: err });
    const timedOut = reason instanceof DOMException && reason.name === "TimeoutError";
    return new HostError(
      timedOut ? ErrorCode.DeadlineExceeded : ErrorCode.Cancelled,
      `turn ${timedOut ? "deadline exceeded" : "cancelled"}; the turn is resumable`,
      { cause: err },
    );
  }
  const { description } = describeFailure(err);
  return new HostError(ErrorCode.Internal, `turn failed: ${description}; the turn is resumable`, { cause: err });
}

/** The prior events a stateless turn starting after `uptoSeq` receives, windowed at the last compaction. */
async function priorEvents(
  deps: ControllerDeps,
  session: string,
  uptoSeq: number,
): Promise<{ events: Event[]; base: number }> {
  if (uptoSeq === 0) return { events: [], base: 0 };
  const log = new SessionLog<{ seq: number; event: Event }>();
  const events: Event[] = [];
  for await (const rec of deps.journal.read(session, 1, uptoSeq)) {
    log.apply(rec);
    events.push(rec.event);
  }
  const base = log.historyBase(uptoSeq + 1);
  return { events: base === 0 ? events : events.slice(base), base };
}

/**
 * Runs the harness once (never retried); on success appends END, on a park returns the gate's ref
 * (nothing more appended), on failure a best-effort ERROR, then rethrows.
 */
async function drive(
  ctx: TurnContext,
  harness: Harness,
  start: StartInfo,
  sink: ReturnType<typeof liveSink>,
  guard: SinkGuard,
  after?: () => void,
): Promise<ApprovalRef | undefined> {
  const started = performance.now();
  try {
    const parked = await driveOnce(ctx, harness, start, sink, guard, after);
    logTurnEnd(ctx, started, parked);
    return parked;
  } catch (err) {
    logTurnEnd(ctx, started, undefined, err);
    throw err;
  }
}

/** Longest failure reason written on a turn's end line (it is also in the journal's ERROR). */
const REASON_CHARS = 512;

/**
 * The controller's end-of-turn line: debug for a completed or parked turn (the RPC line already says
 * it at info), info for one stopped on purpose or refused (cancelled, fenced, busy, a client error),
 * warn for a failure an operator must look at (internal, diverged, deadline, a lost node).
 */
function logTurnEnd(ctx: TurnContext, started: number, parked: ApprovalRef | undefined, err?: unknown): void {
  const log = ctx.log;
  const level = err === undefined ? "debug" : turnFailureLevel(err);
  if (!log.isLevelEnabled(level)) return;
  const fields = {
    outcome: err !== undefined ? "failed" : parked ? "parked" : "completed",
    seq: ctx.head,
    records: ctx.records.length,
    duration_ms: Math.round((performance.now() - started) * 1000) / 1000,
    ...(parked ? { tool_call: clipForLog(parked.toolCallId, 128), request_seq: parked.requestSeq } : {}),
    ...(err !== undefined
      ? {
          code: isHostError(err) ? err.code : "UNKNOWN",
          reason: clipForLog(describeFailure(err).description, REASON_CHARS),
        }
      : {}),
  };
  log[level](fields, "turn ended");
}

const QUIET_FAILURES = new Set<string>([
  ...ABORTING,
  ErrorCode.Cancelled,
  ErrorCode.InvalidArgument,
  ErrorCode.FailedPrecondition,
  ErrorCode.PermissionDenied,
  ErrorCode.ResourceExhausted,
]);

function turnFailureLevel(err: unknown): "info" | "warn" {
  return isHostError(err) && QUIET_FAILURES.has(err.code) ? "info" : "warn";
}

async function driveOnce(
  ctx: TurnContext,
  harness: Harness,
  start: StartInfo,
  sink: ReturnType<typeof liveSink>,
  guard: SinkGuard,
  after?: () => void,
): Promise<ApprovalRef | undefined> {
  let failure: unknown;
  try {
    await boundedRun(harness.run(start, sink, ctx.signal), ctx.signal);
  } catch (err) {
    failure = err;
  }
  await guard.close();
  failure = guard.failed ?? failure;
  if (failure === undefined) {
    try {
      after?.();
    } catch (err) {
      failure = err;
    }
  }
  if (failure !== undefined) {
    // Effects emitted but not carried by a commit belong to no committed command: drop them.
    ctx.deps.effects?.discardPending();
    if (isApprovalParked(failure)) {
      await ctx.flush();
      return failure.ref;
    }
    if (!(isHostError(failure) && ABORTING.has(failure.code))) {
      // A turn cancelled on purpose (Cancel, the Exec client leaving) records the cancellation itself,
      // whatever the harness made of its aborted signal.
      const reason: unknown = ctx.signal.aborted ? ctx.signal.reason : undefined;
      const { code, description } = describeFailure(isHostError(reason, ErrorCode.Cancelled) ? reason : failure);
      const error = ev.error(ctx.executionId, code, description);
      if (reason instanceof TurnCancelled && reason.by !== undefined) error.actor = reason.by;
      await ctx.append(error).catch(() => undefined);
    }
    throw asTurnError(failure, ctx.signal);
  }
  await ctx.append(ev.end(ctx.executionId));
  return undefined;
}

/**
 * The StartInfo a harness receives. `history` may be given as a thunk: it is then materialised on the
 * first read of `start.history` and the same array is returned on every later read, so a harness that
 * never looks at its history (echo, every memory actor) costs no copy of the session's prefix.
 */
function startInfo(
  session: string,
  executionId: string,
  exec: { config: Uint8Array; resumeFromSeq: number; inputs: readonly Message[] },
  history: readonly Event[] | (() => readonly Event[]),
  principal?: IdentityRef,
  requestId?: string,
): StartInfo {
  const identity = {
    ...(principal ? { identity: { principal, canMintTokens: false } } : {}),
    ...(requestId !== undefined ? { requestId } : {}),
  };
  if (typeof history !== "function") {
    return {
      sessionUid: session,
      executionId,
      config: exec.config,
      history,
      inputs: exec.inputs,
      resumeFromSeq: exec.resumeFromSeq,
      ...identity,
    };
  }
  let materialised: readonly Event[] | undefined;
  return {
    ...identity,
    sessionUid: session,
    executionId,
    config: exec.config,
    get history(): readonly Event[] {
      materialised ??= history();
      return materialised;
    },
    inputs: exec.inputs,
    resumeFromSeq: exec.resumeFromSeq,
  };
}

/**
 * The one check of a client's `expected_last_seq` (docs/protocol.md §5.5 item 4): when given, it must
 * equal the session's head as read under the session's lock (Conflict, ABORTED on the wire, otherwise).
 * Exec checks it here, Exec's recovery of a decided turn in placement's resume; no edge checks it.
 */
export function refuseStaleHead(expectedLastSeq: number | undefined, headSeq: number): void {
  if (expectedLastSeq !== undefined && expectedLastSeq !== headSeq)
    throw new HostError(
      ErrorCode.Conflict,
      `expected_last_seq ${expectedLastSeq} but the session's head is ${headSeq}`,
    );
}

/** Runs one live turn. */
export async function execTurn(deps: ControllerDeps, p: ExecParams): Promise<TurnResult> {
  const head = p.headSeq !== undefined ? { seq: p.headSeq } : await deps.journal.head(p.session);
  refuseStaleHead(p.expectedLastSeq, head.seq);
  const prior = p.history
    ? { events: p.history, base: p.historyBase ?? 0 }
    : await priorEvents(deps, p.session, head.seq);
  const history = prior.events;
  const executionId = p.executionId ?? newExecutionId();
  const ctx = new TurnContext(deps, p.session, executionId, p.fence, head.seq, p.signal);
  ctx.log = p.logger ?? NO_LOG;
  ctx.log.debug({ from_seq: head.seq + 1, inputs: p.inputs.length, history: history.length }, "turn started");
  ctx.historyBase = prior.base;
  ctx.historyCount = history.length;
  const config = p.config ?? new Uint8Array();
  const resumeFromSeq = p.resumeFromSeq ?? 0;
  // EXECUTION_START and the inputs ride the turn's first commit (the write-ahead of its first model or
  // tool call, its first harness text, or its END): nothing outside the journal happens on the host's
  // behalf before that commit, and the Exec client is streamed them once they are durable. A host crash
  // before it leaves no trace of the turn — it was never acknowledged (docs/protocol.md §5.1).
  const startEvent = ev.executionStart(executionId, {
    inputCount: p.inputs.length,
    harness: p.binding.name,
    harnessVersion: recordedVersion(p.binding.descriptor.version, p.binding.digest ?? ""),
    config,
    resumeFromSeq,
  });
  if (p.actor !== undefined) startEvent.actor = p.actor;
  ctx.defer(startEvent);
  for (const m of p.inputs) ctx.defer(ev.input(executionId, m));
  const guard = new SinkGuard();
  const start = startInfo(
    p.session,
    executionId,
    { config, resumeFromSeq, inputs: p.inputs },
    history,
    p.identity,
    p.requestId,
  );
  const parked = await drive(ctx, p.binding.harness, start, liveSink(ctx, guard), guard);
  return { executionId, outputs: ctx.outputs, records: ctx.records, lastSeq: ctx.head, ...(parked ? { parked } : {}) };
}

/** The recorded harness of a turn must be the one bound now: same registry name, same version. */
function checkHarnessIdentity(exec: RecordedExecution, binding: HarnessBinding, certified?: string): void {
  checkHarnessName(exec, binding.name);
  checkRecordedVersion(exec, binding.descriptor.version, certified);
}

/**
 * Diverged when the harness now reports another version than the turn is certified for: the version
 * it was recorded with, or the target of an upgrade recorded after it (docs/versioning.md).
 */
export function checkRecordedVersion(exec: RecordedExecution, version: string, certified = exec.harnessVersion): void {
  if (certified !== "" && certified !== version) {
    throw new HostError(
      ErrorCode.Diverged,
      `execution ${exec.executionId} was recorded with harness version "${certified}" but the harness now reports "${version}"`,
    );
  }
}

function checkHarnessName(exec: RecordedExecution, name: string): void {
  if (exec.harness !== "" && exec.harness !== name) {
    throw new HostError(
      ErrorCode.Diverged,
      `execution ${exec.executionId} was recorded with harness "${exec.harness}" but is being driven by "${name}"`,
    );
  }
}

/**
 * Why the pending turn may not be re-driven here, judged from the log alone (so it is checked before
 * any fence, actor or write): a recorded harness of another name, missing inputs, or an unfinished
 * tool call or gate inherited from a fork ancestor — its effect belongs to that ancestor's idempotency
 * scope, and re-driving it here would run it a second time (docs/protocol.md §5.8).
 */
export function resumeRefusal(pending: PendingTurn, harnessName: string): HostError | undefined {
  const exec = pending.execution;
  try {
    checkHarnessName(exec, harnessName);
  } catch (err) {
    return err as HostError;
  }
  if (exec.inputs.length < exec.inputCount) {
    return new HostError(
      ErrorCode.FailedPrecondition,
      `execution ${exec.executionId} recorded ${exec.inputs.length} of ${exec.inputCount} inputs; call Exec again with all inputs`,
    );
  }
  const t = pending.trailing;
  const inherited =
    (t.kind === "tool" && t.owner === "inherited") || (t.kind === "gate" && t.gate.owner === "inherited");
  if (!inherited) return undefined;
  const seq = t.kind === "tool" ? t.seq : t.kind === "gate" ? t.gate.callSeq : 0;
  const what = t.kind === "gate" ? `gated tool call (${t.gate.state})` : "tool call";
  return new HostError(
    ErrorCode.FailedPrecondition,
    `the interrupted turn's ${what} at seq ${seq} was inherited from a fork ancestor; its effect belongs to that session's idempotency scope — fork at or after its TOOL_RESULT instead, or send new input`,
  );
}

export interface ReplayParams {
  readonly session: string;
  readonly binding: HarnessBinding;
  readonly signal: AbortSignal;
  /** Replay only the executions that start after this seq (default 0: every one). */
  readonly afterSeq?: number;
  /** Hand the harness no prior history: a restored memory actor already holds it (I4). */
  readonly noHistory?: boolean;
  /** Deadline of each replayed turn (ms; limit turnMs); default: only `signal` bounds them. */
  readonly turnMs?: number;
  /**
   * An upgrade check (docs/versioning.md): executions certified for this version are replayed under
   * the bound harness's (different) version instead of being refused for it.
   */
  readonly upgradeFrom?: string;
  /** A replay check of new code (docs/versioning.md): recorded versions are not compared at all. */
  readonly anyVersion?: boolean;
}

export interface ReplayResult {
  readonly executions: readonly { readonly executionId: string; readonly outputs: readonly string[] }[];
  /** Every served output, in journal order. */
  readonly outputs: readonly string[];
  readonly recordsRead: number;
}

const refusingModel: ModelProvider = {
  name: "replay-refuses-model",
  invoke(): never {
    throw new HostError(ErrorCode.Diverged, "replay tried to invoke the model (I1)");
  },
};

function replayStopped(reason: unknown, executionId: string): HostError {
  if (isHostError(reason))
    return new HostError(reason.code, `replay of execution ${executionId} stopped: ${reason.message}`);
  const timedOut = reason instanceof DOMException && reason.name === "TimeoutError";
  return new HostError(
    timedOut ? ErrorCode.DeadlineExceeded : ErrorCode.Cancelled,
    `replay of execution ${executionId} ${timedOut ? "exceeded its deadline" : "was cancelled"}`,
  );
}

/** Re-executes every completed turn against its recorded effects: zero model calls, zero appends. */
export async function replaySession(deps: Pick<ControllerDeps, "journal">, p: ReplayParams): Promise<ReplayResult> {
  // Replay projects events only: the chain columns are not read.
  const records = await deps.journal.readEvents(p.session);
  const log = SessionLog.of(records);
  const executions = log.allExecutions();
  const results: { executionId: string; outputs: string[] }[] = [];
  const replayDeps: ControllerDeps = { journal: deps.journal, model: refusingModel };
  // One events array for the whole session; a turn's history is a slice of it, taken only if the
  // harness reads `start.history` — otherwise replaying n turns would copy O(n²) prefix entries.
  const events = records.map((r) => r.event);
  const annotations = (await deps.journal.getSession(p.session))?.annotations;
  for (const exec of executions) {
    if (!exec.completed || exec.startSeq <= (p.afterSeq ?? 0)) continue;
    const certified = log.certifiedVersion(exec);
    const accepted = p.anyVersion === true || (p.upgradeFrom !== undefined && certified === p.upgradeFrom);
    checkHarnessIdentity(exec, p.binding, accepted ? "" : certified);
    const form = inputHashFormOf(annotations, exec.startSeq);
    const deadline = p.turnMs === undefined ? undefined : turnDeadline(p.signal, p.turnMs);
    const signal = deadline?.signal ?? p.signal;
    const ctx = new TurnContext(replayDeps, p.session, exec.executionId, 0, exec.lastSeq, signal, form);
    const serving = new ServingEffects(ctx, exec.effects, "replay");
    const guard = new SinkGuard();
    // The same window the live turn had: from the last compaction before it (§16).
    const base = p.noHistory ? 0 : Math.min(log.historyBase(exec.startSeq), exec.startIndex);
    ctx.historyBase = base;
    ctx.historyCount = p.noHistory ? 0 : exec.startIndex - base;
    const history = p.noHistory ? [] : () => events.slice(base, exec.startIndex);
    let failure: unknown;
    try {
      await boundedRun(
        p.binding.harness.run(
          startInfo(p.session, exec.executionId, exec, history),
          servingSink(serving, ctx, guard),
          signal,
        ),
        signal,
      );
    } catch (err) {
      failure = err;
    } finally {
      deadline?.done();
    }
    await guard.close();
    failure = guard.failed ?? failure;
    if (failure !== undefined) {
      // A divergence past the recorded effects is located at the turn's END, where the harness went on.
      if (failure instanceof DivergedError && failure.seq === undefined)
        throw new DivergedError(exec.lastSeq, failure.why, failure.expected, failure.actual);
      if (isHostError(failure, ErrorCode.Diverged)) throw failure;
      // Stopped from outside (the caller left, or turnMs passed): not a divergence of the harness.
      if (signal.aborted) throw replayStopped(signal.reason, exec.executionId);
      throw new DivergedError(
        exec.lastSeq,
        `replay of execution ${exec.executionId} failed: ${describeFailure(failure).description}`,
        "END",
        `a failed turn: ${describeFailure(failure).description}`,
      );
    }
    if (!serving.exhausted) {
      const next = exec.effects[serving.consumed];
      throw new DivergedError(
        next?.seq ?? exec.lastSeq,
        `in execution ${exec.executionId}: the harness ended after ${serving.consumed} of ${serving.total} recorded effects`,
        next ? (EventKind[next.event.kind] ?? String(next.event.kind)) : "END",
        "END (the harness finished its turn)",
      );
    }
    results.push({ executionId: exec.executionId, outputs: [...ctx.outputs] });
  }
  return { executions: results, outputs: results.flatMap((r) => r.outputs), recordsRead: records.length };
}

/** A session's records as a caller holds them: its head seq, and any range of records 1..head. */
export interface RecordSource {
  readonly headSeq: number;
  /** Records from..to (both inclusive, within 1..headSeq), in seq order. */
  range(from: number, to: number): Promise<readonly JournalRecord[]>;
}

/** A RecordSource over records 1..n held in an array. */
function arraySource(records: readonly JournalRecord[]): RecordSource {
  return {
    headSeq: records.at(-1)?.seq ?? 0,
    range: async (from, to) => records.slice(Math.max(from, 1) - 1, Math.max(to, 0)),
  };
}

export interface ResumeParams {
  readonly session: string;
  readonly binding: HarnessBinding;
  readonly fence: number;
  /** As in ExecParams; default: every event before the interrupted turn. */
  readonly history?: readonly Event[];
  /** The session's head and a reader of its records, when the caller already holds them (else every record is read). */
  readonly records?: RecordSource;
  /** The projection of exactly the records 1..records.headSeq, when the caller already holds it. */
  readonly log?: SessionLog;
  /** The session's recorded principal, handed to the harness as Start.identity (provenance only). */
  readonly identity?: IdentityRef;
  /** The call's x-request-id, handed to the harness as Start.requestId (diagnostics only). */
  readonly requestId?: string;
  /** The operation's logger (request_id, session, harness, turn bound); default: nowhere. */
  readonly logger?: Log;
  readonly signal: AbortSignal;
}

/**
 * Re-drives the session's interrupted last turn, if any: recorded effects are served, a trailing
 * MODEL_CALL without OUTPUT is invoked once, a trailing TOOL_CALL without result re-executed once,
 * then the turn continues live and ends with END. Returns undefined when nothing was pending.
 */
export async function resumeTurn(deps: ControllerDeps, p: ResumeParams): Promise<TurnResult | undefined> {
  let source = p.records;
  let log = p.log;
  if (!source || !log) {
    const all = await deps.journal.readRange(p.session);
    source = arraySource(all);
    log = SessionLog.of(all);
  }
  const turn = log.pending();
  if (!turn) return undefined;
  const opLog = p.logger ?? NO_LOG;
  const refusal = resumeRefusal(turn, p.binding.name);
  if (refusal) {
    opLog.info({ code: refusal.code }, "re-drive refused");
    throw refusal;
  }
  const pending = turn.execution;
  checkHarnessIdentity(pending, p.binding);
  const head = source.headSeq;
  const form = inputHashFormOf((await deps.journal.getSession(p.session))?.annotations, pending.startSeq);
  const ctx = new TurnContext(deps, p.session, pending.executionId, p.fence, head, p.signal, form);
  ctx.log = opLog;
  const serving = new ServingEffects(ctx, pending.effects, "resume");
  opLog.info({ from_seq: pending.startSeq, recorded_effects: serving.total, head }, "turn re-driven");
  const guard = new SinkGuard();
  const base = p.history ? 0 : Math.min(log.historyBase(pending.startSeq), pending.startIndex);
  // Records base+1..startIndex: the events before the turn from the history's start (§16).
  const history = p.history ?? (await source.range(base + 1, pending.startIndex)).map((r) => r.event);
  ctx.historyBase = base;
  ctx.historyCount = history.length;
  const parked = await drive(
    ctx,
    p.binding.harness,
    startInfo(p.session, pending.executionId, pending, history, p.identity, p.requestId),
    servingSink(serving, ctx, guard),
    guard,
    () => {
      if (!serving.exhausted) {
        throw new HostError(
          ErrorCode.Diverged,
          `resume diverged: the harness consumed ${serving.consumed} of ${serving.total} recorded effects`,
        );
      }
    },
  );
  return {
    executionId: pending.executionId,
    outputs: ctx.outputs,
    records: ctx.records,
    lastSeq: ctx.head,
    ...(parked ? { parked } : {}),
  };
}
