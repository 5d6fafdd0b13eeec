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
import { EXEC_UPDATES_HEADER, type ExecUpdateShape } from "../wire/exec-updates.js";
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
  /** The session after the turn (read once the stream ended): its state, head, pending approval. */
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

/** The outcome of a turn whose stream gave `records`, with the session after it. */
function resultOf(session: Session, records: LogRecord[]): ExecResult {
  const last = records.at(-1);
  return { session, outputs: outputsOf(records), records, lastSeq: last ? last.seq : session.lastSeq };
}

export class ExecCall implements AsyncIterable<ExecEvent> {
  private consumed = false;
  private readonly outcome: Promise<ExecResult>;
  private settle!: { resolve(r: ExecResult): void; reject(e: HarnessHostError): void };

  /** @internal */
  constructor(
    private readonly open: (shape: ExecUpdateShape) => OpenedExec,
    private readonly sessionAfter: (uid: string) => Promise<Session>,
  ) {
    this.outcome = new Promise<ExecResult>((resolve, reject) => {
      this.settle = { resolve, reject };
    });
    this.outcome.catch(() => undefined); // reported to whoever awaits result()
  }

  [Symbol.asyncIterator](): AsyncIterator<ExecEvent> {
    return this.consume("all")[Symbol.asyncIterator]();
  }

  /** The turn's outcome; runs the call to its end when nobody iterates it. */
  result(): Promise<ExecResult> {
    if (!this.consumed) {
      void (async () => {
        for await (const _ of this.consume("final"));
      })().catch(() => undefined);
    }
    return this.outcome;
  }

  private async *consume(shape: ExecUpdateShape): AsyncGenerator<ExecEvent, void, undefined> {
    if (this.consumed) throw new HarnessHostError(ErrorCode.FailedPrecondition, "an exec call is consumed once");
    this.consumed = true;
    let uid = "";
    const records: LogRecord[] = [];
    let finished = false;
    /** The last update when it was a Session frame after the first (the closing frame of a negotiated shape). */
    let closing: Session | undefined;
    let frames = 0;
    try {
      /** The shape of the stream being read (`records` after an older host refused `final`). */
      let asked = shape;
      let opened = this.open(shape);
      const reopen = (s: ExecUpdateShape): OpenedExec => {
        asked = s;
        return this.open(s);
      };
      const updates = async function* (): AsyncGenerator<ExecUpdate> {
        try {
          yield* opened.updates;
        } catch (err) {
          if (shape !== "final" || frames > 0 || !refusedAsUnknownShape(err)) throw err;
          opened = reopen("records");
          yield* opened.updates;
        }
      };
      for await (const update of updates()) {
        const event = eventOf(update);
        if (event === undefined) continue;
        // `final` has no opening Session frame: its one Session frame is the closing one.
        const opening = frames === 0 && !(asked === "final" && opened.accepted());
        closing = event.kind === "session" && !opening ? event.session : undefined;
        frames++;
        if (event.kind === "session") uid = event.session.metadata?.uid ?? uid;
        else if (event.kind === "record") records.push(event.record);
        // §20 rule 8: a `final` stream's Session frame is its last frame, sent once the turn settled and
        // its records were committed; the outcome is whole here, so result() does not wait for the status
        // (the stream is still read to its end).
        if (asked === "final" && closing !== undefined && opened.accepted() && !finished) {
          finished = true;
          this.settle.resolve(resultOf(closing, records));
        }
        yield event;
      }
      if (finished) return;
      if (uid === "") throw new HarnessHostError(ErrorCode.Internal, "the Exec stream ended without a Session frame");
      const session = opened.accepted() && closing !== undefined ? closing : await this.sessionAfter(uid);
      finished = true;
      this.settle.resolve(resultOf(session, records));
    } catch (err) {
      const e = clientError(err);
      finished = true;
      this.settle.reject(e);
      throw e;
    } finally {
      if (!finished)
        this.settle.reject(new HarnessHostError(ErrorCode.Cancelled, "the exec call was left before its end"));
    }
  }
}
