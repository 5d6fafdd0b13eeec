// The one projection of a session's log (docs/protocol.md §5.8). Invariant: every fact the host asks of
// a session's records — own vs inherited (the session's own fork point), each turn's status and trailing
// effect, gates with owner and state, compute state, the checkpoint a re-drive restarts from, the
// pending approval — is answered by this fold, which applies one record at a time (O(1) amortised per
// record) and reads structured fields only, never text details. Nothing else scans records for them.
// A lean log (SessionLog.lean(), the placement caches' form) answers every one of those queries exactly
// as the full fold does, but keeps the inputs and effects of the newest execution only while it is
// pending: a completed or superseded turn's are released, and so it cannot list executions
// (allExecutions throws); its `retainedBytes` estimates what it holds.
import {
  EventKind,
  Lifecycle_Kind,
  type Event,
  type Message,
  type ToolCall,
} from "../gen/agentsessions/v1/common_pb.js";
import { ErrorCode, failedPrecondition, HostError } from "../errors/index.js";
import { projectComputeState } from "../journal/compute-state.js";
import type { ComputeStateName, JournalRecord, SeqEvent } from "../journal/types.js";
import type { SnapshotRef } from "../snapshot/ref.js";
import { GateBook, type ApprovalRef, type Gate, type GateBookState, type Owner } from "./gates.js";
import { compactionOfEvent } from "./compaction.js";
import { parseUpgrade, projectPin, splitRecordedVersion, type SessionPin } from "../journal/pin.js";
import { eventBytes } from "../wire/event-bytes.js";
import {
  EXECUTION_OVERHEAD_BYTES,
  ExecTable,
  type ExecTableState,
  MARK_OVERHEAD_BYTES,
  MarkTable,
  type MarkAt,
  type MarkTableState,
} from "./log-tables.js";

export type { ApprovalRef, Gate, GateState, Owner } from "./gates.js";

/** One recorded effect of a turn, with the seq it was committed at. */
export interface RecordedEffect {
  readonly seq: number;
  readonly event: Event;
}

export interface RecordedExecution {
  readonly executionId: string;
  /** Index (0-based) of the execution's EXECUTION_START among the session's records. */
  readonly startIndex: number;
  readonly startSeq: number;
  readonly harness: string;
  /** The descriptor's version the turn was recorded with (the build digest split off). */
  readonly harnessVersion: string;
  /** "sha256:<hex>" of the build that ran the turn; "" when none was recorded (docs/versioning.md). */
  readonly harnessDigest: string;
  readonly config: Uint8Array;
  readonly resumeFromSeq: number;
  readonly inputCount: number;
  readonly inputs: Message[];
  readonly effects: RecordedEffect[];
  readonly completed: boolean;
  readonly lastSeq: number;
  /** The execution's newest ERROR record (a turn cut by a failure or a cancellation), if any. */
  readonly error?: RecordedError;
}

/** What every log (lean ones included) answers about one execution: where it is and whether it completed. */
export interface ExecutionStatus {
  readonly executionId: string;
  readonly startSeq: number;
  readonly lastSeq: number;
  readonly completed: boolean;
  /** Whether it is the session's current turn (the last one: a newer turn supersedes an interrupted one). */
  readonly current: boolean;
}

/** Estimated bytes of a compaction point, an upgrade record or a gate a projection keeps (object and strings). */
export const POINT_OVERHEAD_BYTES = 256;

/** An ERROR record: the gRPC status code number and the description the host recorded. */
export interface RecordedError {
  readonly seq: number;
  readonly code: number;
  readonly description: string;
}

/** A harness-version upgrade recorded in the log (docs/versioning.md). */
export interface RecordedUpgrade {
  readonly seq: number;
  readonly harness: string;
  readonly from: string;
  readonly to: string;
}

/**
 * The harness version (and build digest) a session runs on: the one of its last turn, or of its last
 * upgrade after it. Defined by the journal's pin projection (src/journal/pin.ts).
 */
export type PinnedVersion = SessionPin;

/** What a turn left unfinished after its last recorded effect. */
export type Trailing<R extends SeqEvent = JournalRecord> =
  | { readonly kind: "none" }
  /** MODEL_CALL with no completion: a re-drive invokes the model once. */
  | { readonly kind: "model"; readonly seq: number; readonly owner: Owner }
  /** A host-executed TOOL_CALL with no result (or a gated one with no APPROVAL_REQUEST yet). */
  | { readonly kind: "tool"; readonly seq: number; readonly call: ToolCall; readonly owner: Owner }
  /** A gate that is open or decided, with no receipt. */
  | { readonly kind: "gate"; readonly gate: Gate<R> };

/** The session's last, uncompleted turn: the one Resume re-drives. */
export interface PendingTurn<R extends SeqEvent = JournalRecord> {
  readonly execution: RecordedExecution;
  /** inherited: it started before this session's own fork point (in an ancestor). */
  readonly owner: Owner;
  readonly trailing: Trailing<R>;
}

/** A compaction record (docs/protocol.md §16) as the projection keeps it. */
export interface CompactionPoint {
  /** Seq of the record itself. */
  readonly seq: number;
  readonly fromSeq: number;
  /** Later executions' Start.history begins at throughSeq + 1. */
  readonly throughSeq: number;
  readonly executionId: string;
}

/** The newest SUSPEND recorded by the session itself. */
export interface SuspendPoint {
  readonly seq: number;
  readonly contentHash: string;
  readonly ref: SnapshotRef;
}

/** Where a memory turn (re-)starts: the state its harness had when the turn began (never mid-turn). */
export type RestartPoint =
  | { readonly kind: "checkpoint"; readonly seq: number }
  | { readonly kind: "fresh" }
  | { readonly kind: "none"; readonly why: string };

/*
 * A mark (MarkTable) is a record a checkpoint can be bound to — END, SUSPEND or FORK — and the turn
 * pending there. The state a checkpoint holds is always a clean one: between turns (END, or no pending
 * turn), or the pending turn's start (a park, and every Suspend or Fork of a session with a pending
 * turn, which capture the turn's restart point rather than a live actor that may have run part of it).
 */

/**
 * Everything a lean log holds, as plain data (the form codec.ts stores with a verified
 * position, docs/protocol.md §5.9): `SessionLog.fromState(log.exportState())` answers every query as
 * `log` does and folds on from the same head.
 */
export interface SessionLogState<R extends SeqEvent = JournalRecord> {
  readonly count: number;
  readonly headSeq: number;
  readonly headHash: string;
  readonly ownFrom: number;
  readonly state: ComputeStateName;
  readonly table: ExecTableState;
  readonly current: Building | undefined;
  readonly currentBytes: number;
  readonly gates: GateBookState<R>;
  readonly gateBytes: number;
  readonly lastEnd: number;
  readonly ownSuspend: SuspendPoint | undefined;
  readonly marks: MarkTableState;
  readonly compactions: readonly CompactionPoint[];
  readonly pin: PinnedVersion | undefined;
  readonly upgrades: readonly RecordedUpgrade[];
}

export interface Building {
  executionId: string;
  startIndex: number;
  startSeq: number;
  harness: string;
  harnessVersion: string;
  harnessDigest: string;
  config: Uint8Array;
  resumeFromSeq: number;
  inputCount: number;
  inputs: Message[];
  effects: RecordedEffect[];
  completed: boolean;
  lastSeq: number;
  error?: RecordedError;
}

const EFFECT_KINDS = new Set<EventKind>([
  EventKind.EVENT_MODEL_CALL,
  EventKind.EVENT_OUTPUT,
  EventKind.EVENT_TOOL_CALL,
  EventKind.EVENT_TOOL_RESULT,
  EventKind.EVENT_USAGE,
  EventKind.EVENT_APPROVAL_REQUEST,
  EventKind.EVENT_APPROVAL_RESULT,
]);

function recordedBuild(recorded: string): { harnessVersion: string; harnessDigest: string } {
  const { version, digest } = splitRecordedVersion(recorded);
  return { harnessVersion: version, harnessDigest: digest };
}

/** The message of a log the projection refuses: the seq, then what is wrong there. */
function badLog(seq: number, why: string): string {
  return `invalid execution log at seq ${seq}: ${why}`;
}

function hashOf(rec: SeqEvent): string {
  const h = (rec as Partial<JournalRecord>).contentHash;
  return typeof h === "string" ? h : "";
}

/**
 * The fold. `apply` takes the session's records in seq order; every query reads the state, none reads
 * a record again. A log that breaks the execution grammar keeps folding lifecycle facts, and the
 * execution queries throw the first violation (FAILED_PRECONDITION).
 */
export class SessionLog<R extends SeqEvent = JournalRecord> {
  private count = 0;
  private headSeq = 0;
  private headHash = "";
  /** Seq of this session's own LIFECYCLE_FORK marker (the last one in its records); 0 for a root. */
  private ownFrom = 0;
  private state: ComputeStateName = "NONE";
  /** Every execution's position and status, in first-seen order (both forms). */
  private table = new ExecTable();
  /** A full log's executions, index-aligned with `table`; undefined in a lean log. */
  private readonly details: Building[] | undefined;
  /** The newest execution with its inputs and effects, while a lean log retains it (a full log: always). */
  private current: Building | undefined;
  /** Encoded bytes of the inputs and effects `current` holds in a lean log. */
  private currentBytes = 0;
  private gates = new GateBook<R>();
  private gateBytes = 0;
  private broken: HostError | undefined;
  private lastEnd = 0;
  private ownSuspend: SuspendPoint | undefined;
  private marks = new MarkTable();
  private compactions: CompactionPoint[] = [];
  private pin: PinnedVersion | undefined;
  private upgradeList: RecordedUpgrade[] = [];

  /** @param opts.lean keep only the pending turn's inputs and effects (see the module comment). */
  constructor(opts: { readonly lean?: boolean } = {}) {
    this.details = opts.lean === true ? undefined : [];
  }

  static of<R extends SeqEvent>(records: readonly R[]): SessionLog<R> {
    const log = new SessionLog<R>();
    for (const r of records) log.apply(r);
    return log;
  }

  /** An empty lean log (the form the placement caches keep). */
  static lean<R extends SeqEvent = JournalRecord>(): SessionLog<R> {
    return new SessionLog<R>({ lean: true });
  }

  /**
   * The lean log's state as plain data (it shares the log's objects: encode it before folding on).
   * Undefined for a full log and for a log that broke the execution grammar (neither is kept with a
   * verified position: the host folds those from the records).
   */
  exportState(): SessionLogState<R> | undefined {
    if (this.details || this.broken) return undefined;
    return {
      count: this.count,
      headSeq: this.headSeq,
      headHash: this.headHash,
      ownFrom: this.ownFrom,
      state: this.state,
      table: this.table.exportState(),
      current: this.current,
      currentBytes: this.currentBytes,
      gates: this.gates.exportState(),
      gateBytes: this.gateBytes,
      lastEnd: this.lastEnd,
      ownSuspend: this.ownSuspend,
      marks: this.marks.exportState(),
      compactions: this.compactions,
      pin: this.pin,
      upgrades: this.upgradeList,
    };
  }

  /** A lean log in the state `exportState` described (RangeError when its tables disagree). */
  static fromState<R extends SeqEvent>(s: SessionLogState<R>): SessionLog<R> {
    const log = new SessionLog<R>({ lean: true });
    log.count = s.count;
    log.headSeq = s.headSeq;
    log.headHash = s.headHash;
    log.ownFrom = s.ownFrom;
    log.state = s.state;
    log.table = ExecTable.fromState(s.table);
    log.current = s.current;
    log.currentBytes = s.currentBytes;
    log.gates = GateBook.fromState(s.gates);
    log.gateBytes = s.gateBytes;
    log.lastEnd = s.lastEnd;
    log.ownSuspend = s.ownSuspend;
    log.marks = MarkTable.fromState(s.marks);
    log.compactions = [...s.compactions];
    log.pin = s.pin;
    log.upgradeList = [...s.upgrades];
    if (s.current && log.table.indexOf(s.current.executionId) !== log.table.length - 1)
      throw new RangeError("the retained execution is not the newest");
    return log;
  }

  /** Whether completed turns' inputs and effects are released (allExecutions then throws). */
  get isLean(): boolean {
    return this.details === undefined;
  }

  /**
   * Estimated bytes this projection holds: the encoded inputs and effects it retains, the gates'
   * calls and decisions, and a constant per execution, mark, compaction and upgrade
   * (EXECUTION_OVERHEAD_BYTES, MARK_OVERHEAD_BYTES, POINT_OVERHEAD_BYTES). A full log retains every
   * execution's inputs and effects, which this does not count.
   */
  get retainedBytes(): number {
    return (
      this.currentBytes +
      this.gateBytes +
      this.table.length * EXECUTION_OVERHEAD_BYTES +
      this.marks.length * MARK_OVERHEAD_BYTES +
      (this.compactions.length + this.upgradeList.length) * POINT_OVERHEAD_BYTES
    );
  }

  /** Folds one record (the next in seq order). */
  apply(rec: R): this {
    const event = rec.event;
    const index = this.count++;
    this.headSeq = rec.seq;
    this.headHash = hashOf(rec);
    this.state = projectComputeState(this.state, event);
    this.pin = projectPin(this.pin, rec.seq, event);
    if (event.body.case === "lifecycle") {
      this.applyLifecycle(rec, event.body.value.kind);
      return this;
    }
    if (event.kind === EventKind.EVENT_LIFECYCLE) return this;
    if (this.broken) return this;
    try {
      this.applyExecution(rec, index);
    } catch (err) {
      this.broken = err as HostError;
    }
    return this;
  }

  private applyLifecycle(rec: R, kind: Lifecycle_Kind): void {
    const event = rec.event;
    if (event.body.case !== "lifecycle") return;
    const lc = event.body.value;
    switch (kind) {
      case Lifecycle_Kind.LIFECYCLE_FORK:
        this.ownFrom = rec.seq;
        this.ownSuspend = undefined;
        this.mark(rec);
        break;
      case Lifecycle_Kind.LIFECYCLE_SUSPEND: {
        this.mark(rec);
        this.ownSuspend = {
          seq: rec.seq,
          contentHash: hashOf(rec),
          ref: {
            local: lc.snapshotLocal,
            externalUri: lc.snapshotExternalUri,
            memory: lc.snapshotMemory,
            sealed: lc.snapshotSealed,
          },
        };
        break;
      }
      case Lifecycle_Kind.LIFECYCLE_BASELINE: {
        const up = parseUpgrade(kind, lc.detail);
        if (up) this.upgradeList.push({ seq: rec.seq, ...up });
        break;
      }
      case Lifecycle_Kind.LIFECYCLE_UNSPECIFIED:
      case Lifecycle_Kind.LIFECYCLE_RESUME:
      case Lifecycle_Kind.LIFECYCLE_CANCEL:
        break;
      default:
        break;
    }
  }

  private mark(rec: R): void {
    const pendingAt = this.broken ? -1 : this.pendingIndex();
    this.marks.add(rec.seq, hashOf(rec), pendingAt);
  }

  /** Index of the pending (newest, uncompleted) execution; -1 when none. */
  private pendingIndex(): number {
    const i = this.table.length - 1;
    return i >= 0 && !this.table.completed(i) ? i : -1;
  }

  /** The Building of execution `i` when this log holds it. */
  private detailOf(i: number): Building | undefined {
    if (this.details) return this.details[i];
    return i === this.table.length - 1 ? this.current : undefined;
  }

  /** A lean log drops the newest execution's inputs and effects (it completed, or a newer one started). */
  private release(): void {
    if (this.details) return;
    this.current = undefined;
    this.currentBytes = 0;
  }

  /** A lean log counts what it retains of the newest execution. */
  private retain(exec: Building, rec: R): void {
    if (!this.details && exec === this.current) this.currentBytes += eventBytes(rec.event);
  }

  private applyExecution(rec: R, index: number): void {
    const event = rec.event;
    if (event.executionId === "") throw failedPrecondition(badLog(rec.seq, "event without execution id"));
    const t = this.table;
    const i = t.indexOf(event.executionId);
    if (i === undefined) {
      this.startExecution(rec, index);
      return;
    }
    const exec = this.detailOf(i);
    t.touch(i, rec.seq);
    if (exec) exec.lastSeq = rec.seq;
    if (t.completed(i)) throw failedPrecondition(badLog(rec.seq, `event after END of execution ${event.executionId}`));
    switch (event.kind) {
      case EventKind.EVENT_INPUT:
        if (event.body.case !== "message") throw failedPrecondition(badLog(rec.seq, "INPUT without message"));
        t.addInput(i);
        if (exec) {
          exec.inputs.push(event.body.value);
          this.retain(exec, rec);
        }
        return;
      case EventKind.EVENT_END:
        if (t.inputsSeen(i) !== t.inputCount(i))
          throw failedPrecondition(
            badLog(
              t.startSeq(i),
              `execution ${event.executionId} has ${t.inputsSeen(i)} inputs, EXECUTION_START says ${t.inputCount(i)}`,
            ),
          );
        t.complete(i);
        if (exec) exec.completed = true;
        this.lastEnd = rec.seq;
        this.mark(rec);
        if (exec && exec === this.current) this.release();
        return;
      case EventKind.EVENT_ERROR:
        if (exec && event.body.case === "error")
          exec.error = { seq: rec.seq, code: event.body.value.code, description: event.body.value.description };
        return;
      case EventKind.EVENT_EXECUTION_START:
        throw failedPrecondition(badLog(rec.seq, "second EXECUTION_START for one execution"));
      default:
        if (!EFFECT_KINDS.has(event.kind))
          throw failedPrecondition(badLog(rec.seq, `unexpected event kind ${EventKind[event.kind] ?? event.kind}`));
        if (exec) {
          exec.effects.push({ seq: rec.seq, event });
          this.retain(exec, rec);
        }
        this.applyGate(rec);
        this.noteCompaction(rec, t.startSeq(i), event.executionId);
    }
  }

  private startExecution(rec: R, index: number): void {
    const event = rec.event;
    if (event.kind !== EventKind.EVENT_EXECUTION_START || event.body.case !== "executionStart") {
      throw failedPrecondition(badLog(rec.seq, "execution does not begin with EXECUTION_START"));
    }
    const start = event.body.value;
    if (start.inputCount === undefined || start.inputCount < 0n)
      throw failedPrecondition(badLog(rec.seq, "EXECUTION_START without input_count"));
    const exec: Building = {
      executionId: event.executionId,
      startIndex: index,
      startSeq: rec.seq,
      harness: start.harness,
      ...recordedBuild(start.harnessVersion),
      config: start.config,
      resumeFromSeq: Number(start.resumeFromSeq),
      inputCount: Number(start.inputCount),
      inputs: [],
      effects: [],
      completed: false,
      lastSeq: rec.seq,
    };
    // A newer turn supersedes the newest one: a lean log never needs its inputs or effects again.
    this.release();
    this.table.add(exec.executionId, rec.seq, exec.inputCount);
    this.details?.push(exec);
    this.current = exec;
  }

  /** Folds an effect into the gate book, counting what a new gated call or decision retains. */
  private applyGate(rec: R): void {
    const c = rec.event.body.case;
    const before = c === "tool" || c === "approval" || c === "approvalResult";
    this.gates.apply(rec);
    if (!before) return;
    if (c === "approval") this.gateBytes += POINT_OVERHEAD_BYTES;
    else if (c === "tool" || c === "approvalResult") this.gateBytes += eventBytes(rec.event);
  }

  /** A compaction record counts only with a range that lies before its own execution's start. */
  private noteCompaction(rec: R, startSeq: number, executionId: string): void {
    const c = compactionOfEvent(rec.event);
    if (!c) return;
    const fromSeq = Number(c.fromSeq);
    const throughSeq = Number(c.throughSeq);
    const prior = this.compactions.at(-1)?.throughSeq ?? 0;
    if (!(throughSeq >= fromSeq && fromSeq >= 1 && throughSeq < startSeq && throughSeq >= prior)) return;
    this.compactions.push({ seq: rec.seq, fromSeq, throughSeq, executionId });
  }

  private owner(seq: number): Owner {
    return seq < this.ownFrom ? "inherited" : "own";
  }

  private pendingBuilding(): Building | undefined {
    return this.pendingIndex() >= 0 ? this.current : undefined;
  }

  private checked(): void {
    if (this.broken) throw this.broken;
  }

  private trailingOf(exec: Building | undefined): Trailing<R> {
    const last = exec?.effects.at(-1);
    if (!exec || !last) return { kind: "none" };
    const e = last.event;
    switch (e.body.case) {
      case "model":
        return { kind: "model", seq: last.seq, owner: this.owner(last.seq) };
      case "tool":
        return { kind: "tool", seq: last.seq, call: e.body.value, owner: this.owner(last.seq) };
      case "approval":
      case "approvalResult": {
        const gate = this.gates.get(exec.executionId, e.body.value.toolCallId, this.ownFrom);
        return gate && gate.state !== "receipted" ? { kind: "gate", gate } : { kind: "none" };
      }
      default:
        return { kind: "none" };
    }
  }

  // ---- queries ----

  get head(): { readonly seq: number; readonly hash: string } {
    return { seq: this.headSeq, hash: this.headHash };
  }

  /** How many records were folded. */
  get length(): number {
    return this.count;
  }

  /** Seq of the session's own FORK marker (0 for a root): records before it are inherited. */
  get ownForkSeq(): number {
    return this.ownFrom;
  }

  /** The compute state the journal's session row carries (same projection, same records). */
  get computeState(): ComputeStateName {
    return this.state;
  }

  /**
   * Every execution, in first-seen order (throws on a log that breaks the execution grammar). A lean
   * log released them: INTERNAL — replay, conformance and upgrade checks fold their own full logs.
   */
  allExecutions(): readonly RecordedExecution[] {
    this.checked();
    if (!this.details)
      throw new HostError(ErrorCode.Internal, "a lean session log keeps no completed executions (fold a full log)");
    return this.details;
  }

  /**
   * Where execution `executionId` is, whether it completed, and whether it is the session's current
   * turn (the last one: a newer turn supersedes an interrupted one). Undefined when the log has no
   * such execution.
   */
  execution(executionId: string): ExecutionStatus | undefined {
    this.checked();
    const i = this.table.indexOf(executionId);
    if (i === undefined) return undefined;
    const t = this.table;
    return {
      executionId,
      startSeq: t.startSeq(i),
      lastSeq: t.lastSeq(i),
      completed: t.completed(i),
      current: i === t.length - 1,
    };
  }

  /** The last execution if it did not complete, with its owner and trailing effect. */
  pending(): PendingTurn<R> | undefined {
    this.checked();
    const exec = this.pendingBuilding();
    if (!exec) return undefined;
    return { execution: exec, owner: this.owner(exec.startSeq), trailing: this.trailingOf(exec) };
  }

  /**
   * The call the pending turn waits on: its trailing tool call (recorded, no result yet) or the call
   * its trailing gate holds. Undefined when no turn is pending or it trails anything else.
   */
  awaitedCall(): ToolCall | undefined {
    const trailing = this.broken ? undefined : this.pending()?.trailing;
    if (trailing?.kind === "tool") return trailing.call;
    if (trailing?.kind === "gate") return trailing.gate.call;
    return undefined;
  }

  /** Whether any turn ran in this log (own or inherited): an actor has history. */
  get hasTurns(): boolean {
    return this.table.length > 0;
  }

  /** Seq of the last END (0 when no turn completed). */
  get lastEndSeq(): number {
    return this.lastEnd;
  }

  /** Every completed execution that started after `seq`. */
  completedAfter(seq: number): number {
    let n = 0;
    const t = this.table;
    for (let i = t.length - 1; i >= 0 && t.startSeq(i) > seq; i--) if (t.completed(i)) n++;
    return n;
  }

  /** The session's newest compaction record (own or inherited through a fork), if any. */
  get lastCompaction(): CompactionPoint | undefined {
    return this.compactions.at(-1);
  }

  /**
   * Where a stateless harness's Start.history begins for an execution starting at `startSeq`: after
   * the through_seq of the newest compaction recorded before it (0: every prior event, §16).
   */
  historyBase(startSeq: number): number {
    for (let i = this.compactions.length - 1; i >= 0; i--) {
      const c = this.compactions[i]!;
      if (c.seq < startSeq) return c.throughSeq;
    }
    return 0;
  }

  /**
   * The harness version the session is pinned to (docs/versioning.md): the version its last turn was
   * recorded with, or the target of an upgrade recorded after it. Undefined before the first turn (the
   * session then gets the newest version). An empty version is a turn recorded without one.
   */
  get pinnedVersion(): PinnedVersion | undefined {
    return this.pin;
  }

  /** Every upgrade record, in seq order (inherited ones included). */
  get upgrades(): readonly RecordedUpgrade[] {
    return this.upgradeList;
  }

  /**
   * The version an execution is certified for: the one it was recorded with, carried forward by every
   * upgrade recorded after it that started from that version (an upgrade replayed the turn under its
   * target and found it identical).
   */
  certifiedVersion(exec: RecordedExecution): string {
    let version = exec.harnessVersion;
    for (const up of this.upgradeList) if (up.seq > exec.startSeq && up.from === version) version = up.to;
    return version;
  }

  /** The newest SUSPEND this session recorded itself (inherited ones are the parent's). */
  get lastOwnSuspend(): SuspendPoint | undefined {
    return this.ownSuspend;
  }

  /** The gate named by an exact tuple, if the log has it. */
  gate(ref: ApprovalRef): Gate<R> | undefined {
    this.checked();
    const gate = this.gates.get(ref.executionId, ref.toolCallId, this.ownFrom);
    return gate && gate.ref.requestSeq === ref.requestSeq ? gate : undefined;
  }

  /** The session's own gate that the pending turn waits on (open or decided, no receipt). */
  ownUnreceiptedGate(): Gate<R> | undefined {
    const p = this.broken ? undefined : this.pending();
    if (p?.trailing.kind !== "gate" || p.trailing.gate.owner !== "own") return undefined;
    return p.trailing.gate;
  }

  /** Session.pending_approval: the own open gate — exactly the one Approve accepts. */
  pendingApproval(): Gate<R> | undefined {
    const gate = this.ownUnreceiptedGate();
    return gate?.state === "open" ? gate : undefined;
  }

  /** Parked: the pending turn waits on its own undecided gate. */
  get parked(): boolean {
    return this.pendingApproval() !== undefined;
  }

  /**
   * The state a memory turn `executionId` must (re)start from, given the session's newest checkpoint:
   * that checkpoint when it is bound to an END, SUSPEND or FORK of this log (see MarkTable) and no other
   * turn completed after it; a fresh actor when no turn ever completed; else none — never the live
   * actor of a turn that already ran. A turn interrupted and never completed leaves no change behind.
   */
  restartPoint(executionId: string, checkpoint: { seq: number; contentHash: string } | undefined): RestartPoint {
    this.checked();
    if (checkpoint) {
      const mark = this.marks.get(checkpoint.seq);
      if (mark && mark.hash === checkpoint.contentHash && !this.completedSince(checkpoint.seq, mark, executionId))
        return { kind: "checkpoint", seq: checkpoint.seq };
    }
    if (this.lastEnd === 0) return { kind: "fresh" };
    return {
      kind: "none",
      why: checkpoint
        ? `the newest checkpoint (seq ${checkpoint.seq}) does not hold the start state of turn ${executionId}`
        : `no checkpoint holds the start state of turn ${executionId}`,
    };
  }

  /** Whether a turn other than `executionId` completed after the mark's state was taken. */
  private completedSince(seq: number, mark: MarkAt, executionId: string): boolean {
    const t = this.table;
    const from = mark.pendingAt >= 0 ? t.startSeq(mark.pendingAt) : seq;
    const own = t.indexOf(executionId) ?? -1;
    for (let i = t.length - 1; i >= 0 && t.startSeq(i) >= from; i--) {
      if (t.completed(i) && t.lastSeq(i) > seq && i !== own) return true;
    }
    return false;
  }
}

/** Groups records into executions in first-seen order; lifecycle records are session-scoped. */
export function projectExecutions(records: readonly SeqEvent[]): readonly RecordedExecution[] {
  return SessionLog.of(records).allExecutions();
}

/** The last execution if it did not complete (the one Resume re-drives). */
export function pendingExecution(executions: readonly RecordedExecution[]): RecordedExecution | undefined {
  const last = executions.at(-1);
  return last && !last.completed ? last : undefined;
}
