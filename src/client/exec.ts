// One Exec call as a client sees it. Invariants: the call starts when it is first iterated or awaited
// (never both: it is consumed once); `result()` settles exactly once — with the turn's outcome after
// the stream ended, or with the HarnessHostError that ended it (CANCELLED when the caller left the
// loop early or aborted); the stream is cancelled whenever its consumer stops. The call negotiates an
// update shape (docs/protocol.md §20): `final` when only result() consumes it (nobody sees the frames as
// they come), `all` when it is iterated; when the host accepted the shape, the stream's closing Session
// frame is the session after the turn and no GetSession follows; a host that did not (the Go reference)
// is asked. A host that refused `final` as unknown (a harnesshost before it) refused it before reading
// or writing anything, so the call is opened once more with `records`.
import { EventKind, type LogRecord } from "../gen/agentsessions/v1/common_pb.js";
import type { ExecUpdate } from "../gen/agentsessions/v1/session_pb.js";
import { messageText } from "../model/text.js";
import { EXEC_UPDATES_HEADER, type ExecUpdateShape, unpackFrames } from "../wire/exec-updates.js";
import { fromBinary } from "@bufbuild/protobuf";
import { ExecUpdateSchema } from "../gen/agentsessions/v1/session_pb.js";
import { NOT_SERVED } from "./turn-stream.js";
import { clientError, ErrorCode, HarnessHostError } from "./errors.js";
import { type Session, withTurn } from "./turn.js";

/** One update of a running turn. */
export type ExecEvent =
  /** The session the turn runs on (first; a new session's uid is here). */
  | { readonly kind: "session"; readonly session: Session }
  /** A journaled record; `output` is its text when it is an OUTPUT record. */
  | { readonly kind: "record"; readonly record: LogRecord; readonly output?: string }
  /** Ephemeral streaming text (never journaled). */
  | { readonly kind: "delta"; readonly executionId: string; readonly chunk: string; readonly done: boolean };

export interface ExecResult {
  /** The session after the turn (the stream's closing frame, or GetSession): its state, head, pending approval. */
  readonly session: Session;
  /** OUTPUT texts the turn committed, in order. */
  readonly outputs: readonly string[];
  /** Every record the turn committed. */
  readonly records: readonly LogRecord[];
  /** The seq of the turn's last record (the session head when it committed none). */
  readonly lastSeq: bigint;
}

/** The OUTPUT text of a record, or undefined when it is not an OUTPUT message. */
export function outputOf(record: LogRecord): string | undefined {
  const ev = record.event;
  return ev?.kind === EventKind.EVENT_OUTPUT && ev.body.case === "message" ? messageText(ev.body.value) : undefined;
}

/** The OUTPUT texts of a run of records, in order. */
export function outputsOf(records: Iterable<LogRecord>): string[] {
  const out: string[] = [];
  for (const rec of records) {
    const text = outputOf(rec);
    if (text !== undefined) out.push(text);
  }
  return out;
}

function eventOf(update: ExecUpdate): ExecEvent | undefined {
  const u = update.update;
  switch (u.case) {
    case "session":
      return { kind: "session", session: withTurn(u.value) };
    case "record": {
      const output = outputOf(u.value);
      return output !== undefined ? { kind: "record", record: u.value, output } : { kind: "record", record: u.value };
    }
    case "delta":
      return { kind: "delta", executionId: u.value.executionId, chunk: u.value.chunk, done: u.value.done };
    case undefined:
      return undefined;
    default: {
      const exhaustive: never = u;
      throw new HarnessHostError(ErrorCode.Internal, `unknown ExecUpdate ${String(exhaustive)}`);
    }
  }
}

/** An opened Exec stream, and whether the host accepted the shape it was asked for (known once headers came). */
export interface OpenedExec {
  readonly updates: AsyncIterable<ExecUpdate>;
  accepted(): boolean;
}

/** An older harnesshost's refusal of a shape it does not know (§20 rule 4), sent before anything ran. */
function refusedAsUnknownShape(err: unknown): boolean {
  const e = clientError(err);
  return (
    e.code === ErrorCode.InvalidArgument && e.message.includes(`${EXEC_UPDATES_HEADER} "final" is not a known shape`)
  );
}

/** A turn answered whole over the turn stream: no Exec stream to read, the `final` shape accepted. */
const ANSWERED: OpenedExec = {
  updates: { [Symbol.asyncIterator]: () => ({ next: async () => ({ done: true, value: undefined }) }) },
  accepted: () => true,
};

/** The outcome of a turn whose stream gave `records`, with the session after it. */
function resultOf(session: Session, records: LogRecord[]): ExecResult {
  const last = records.at(-1);
  return { session, outputs: outputsOf(records), records: [...records], lastSeq: last ? last.seq : session.lastSeq };
}

export class ExecCall implements AsyncIterable<ExecEvent> {
  private consumed = false;
  private readonly outcome: Promise<ExecResult>;
  private settle!: { resolve(r: ExecResult): void; reject(e: HarnessHostError): void };

  /** @internal */
  constructor(
    private readonly open: (shape: ExecUpdateShape) => OpenedExec,
    private readonly sessionAfter: (uid: string) => Promise<Session>,
    /** The turn over the client's turn stream (§21), or undefined when this call may not use it. */
    private readonly overStream?: () => Promise<Uint8Array[] | typeof NOT_SERVED> | undefined,
  ) {
    this.outcome = new Promise<ExecResult>((resolve, reject) => {
      this.settle = { resolve, reject };
    });
    this.outcome.catch(() => undefined); // reported to whoever awaits result()
  }

  [Symbol.asyncIterator](): AsyncIterator<ExecEvent> {
    return this.consume()[Symbol.asyncIterator]();
  }

  /** The turn's outcome; runs the call to its end (as `final`) when nobody iterates it. */
  result(): Promise<ExecResult> {
    if (!this.consumed) void this.drain().catch(() => undefined);
    return this.outcome;
  }

  private claim(): void {
    if (this.consumed) throw new HarnessHostError(ErrorCode.FailedPrecondition, "an exec call is consumed once");
    this.consumed = true;
  }

  /** Iterated: the `all` shape, each frame yielded as it comes. */
  private async *consume(): AsyncGenerator<ExecEvent, void, undefined> {
    this.claim();
    let frames: TurnFrames | undefined;
    try {
      // Opening may throw at once (metadata grpc-js refuses): that is the outcome too.
      frames = new TurnFrames("all", this.open("all"));
      for await (const update of frames.opened.updates) {
        const event = frames.take(update);
        if (event !== undefined) yield event;
      }
      await this.finish(frames);
    } catch (err) {
      throw this.fail(err);
    } finally {
      if (frames?.settled !== true)
        this.fail(new HarnessHostError(ErrorCode.Cancelled, "the exec call was left before its end"));
    }
  }

  /**
   * Awaited alone: the `final` shape, read to the stream's end without yielding anything; the outcome
   * settles at the closing frame (§20 rule 8). A host that refused `final` as unknown (before reading or
   * writing anything) is asked again with `records`.
   */
  private async drain(): Promise<void> {
    this.claim();
    try {
      const streamed = this.overStream?.();
      const packed = streamed === undefined ? NOT_SERVED : await streamed;
      if (packed !== NOT_SERVED) {
        this.settleFromStream(packed);
        return;
      }
      // Opening may throw at once (metadata grpc-js refuses): that is the outcome too.
      let frames = new TurnFrames("final", this.open("final"));
      try {
        await this.read(frames);
      } catch (err) {
        if (frames.count > 0 || !refusedAsUnknownShape(err)) throw err;
        frames = new TurnFrames("records", this.open("records"));
        await this.read(frames);
      }
      await this.finish(frames);
    } catch (err) {
      throw this.fail(err);
    }
  }

  /** The outcome from a turn stream's answer: the `final` shape's frames, packed (§21). */
  private settleFromStream(packed: readonly Uint8Array[]): void {
    const frames = new TurnFrames("final", ANSWERED);
    for (const bytes of packed)
      for (const frame of unpackFrames(bytes) ?? [bytes]) {
        frames.take(fromBinary(ExecUpdateSchema, frame));
        if (frames.finalClosed) break;
      }
    if (!frames.finalClosed)
      throw new HarnessHostError(ErrorCode.Internal, "the turn stream answered without a closing Session frame");
    this.succeed(frames, frames.closing);
  }

  /** Reads the stream to its end; resolves the outcome at an accepted `final` stream's closing frame. */
  private async read(frames: TurnFrames): Promise<void> {
    for await (const update of frames.opened.updates) {
      // After the outcome, the rest of the stream is read (to its status) but changes nothing: a host
      // that sent frames after its closing one broke §20 rule 8, and the caller's result stays as given.
      if (frames.settled) continue;
      frames.take(update);
      if (frames.finalClosed) this.succeed(frames, frames.closing);
    }
  }

  /** After the stream's end: the outcome, with the session from the closing frame or GetSession. */
  private async finish(frames: TurnFrames): Promise<void> {
    if (frames.settled) return;
    if (frames.uid === "")
      throw new HarnessHostError(ErrorCode.Internal, "the Exec stream ended without a Session frame");
    const closing = frames.opened.accepted() ? frames.closing : undefined;
    this.succeed(frames, closing ?? (await this.sessionAfter(frames.uid)));
  }

  private succeed(frames: TurnFrames, session: Session | undefined): void {
    if (session === undefined) return;
    frames.settled = true;
    this.settle.resolve(resultOf(session, frames.records));
  }

  /** Rejects the outcome with `err` (once settled, nothing changes) and returns it as the client's error. */
  private fail(err: unknown): HarnessHostError {
    const e = clientError(err);
    this.settle.reject(e);
    return e;
  }
}

/**
 * What the frames of one opened Exec stream add up to: the session uid, the records, and the closing
 * Session frame of a negotiated shape (the last frame when it was a Session frame after the first —
 * `final` has no opening Session frame, so its one Session frame is the closing one).
 */
class TurnFrames {
  readonly opened: OpenedExec;
  uid = "";
  readonly records: LogRecord[] = [];
  closing: Session | undefined;
  count = 0;
  /** The outcome was settled from these frames. */
  settled = false;

  constructor(
    readonly shape: ExecUpdateShape,
    opened: OpenedExec,
  ) {
    this.opened = opened;
  }

  /** An accepted `final` stream's closing frame has come: the outcome is whole (§20 rule 8). */
  get finalClosed(): boolean {
    return this.shape === "final" && this.closing !== undefined && this.opened.accepted();
  }

  /** The event of `update` (undefined for an empty frame), noting what it adds. */
  take(update: ExecUpdate): ExecEvent | undefined {
    const event = eventOf(update);
    if (event === undefined) return undefined;
    const opening = this.count === 0 && !(this.shape === "final" && this.opened.accepted());
    this.closing = event.kind === "session" && !opening ? event.session : undefined;
    this.count++;
    if (event.kind === "session") this.uid = event.session.metadata?.uid ?? this.uid;
    else if (event.kind === "record") this.records.push(event.record);
    return event;
  }
}
