// The Sessions half of `harnesshost/client`. Invariants: every method is one or a few Sessions RPCs
// and reports failures as HarnessHostError; a gate decision is sent with the explicit tuple the caller
// gives, else the tuple read from the session's pending_approval; list and replay fetch lazily, page by
// page, as the caller iterates; a filtered list asks harnesshost.v1.Console.ListSessions (the host
// filters, so a filter costs no pages of non-matching sessions), an unfiltered one the wire's ListSessions;
// every Session returned carries its typed `turn`, and every seq in a result is a bigint (docs/client.md).
import type { LogRecord } from "../gen/agentsessions/v1/common_pb.js";
import type { Sessions, Session as WireSession } from "../gen/agentsessions/v1/session_pb.js";
import type { Console } from "../gen/harnesshost/v1/console_pb.js";
import { jsonlLine } from "../journal/transfer/export.js";
import { textMessage } from "../model/text.js";
import type { MethodsOf, ServiceClient } from "../wire/index.js";
import { answerText, pendingTuple, pendingQuestion, type PendingTuple } from "./decisions.js";
import { call, ErrorCode, HarnessHostError, stream } from "./errors.js";
import { EXEC_UPDATES_HEADER, unpackFrames } from "../wire/exec-updates.js";
import { ExecCall, outputsOf } from "./exec.js";
import { wireOptions, type CallOptions } from "./options.js";
import { type Session, withTurn } from "./turn.js";
import type { TurnStream } from "./turn-stream.js";
import { create } from "@bufbuild/protobuf";
import { ExecRequestSchema } from "../gen/agentsessions/v1/session_pb.js";

/**
 * A sequence number given to the client: a number or a bigint (a result's seq fed back as is). Every
 * seq the client returns is a bigint, as the wire's int64 fields are.
 */
export type Seq = number | bigint;

export interface ExecOptions {
  /** The session to continue; omit it (and name a harness) to create a session. */
  readonly session?: string;
  /** The harness of a new session (default: the host's default harness). */
  readonly harness?: string;
  /** The turn's user input: one text, or several messages' texts. */
  readonly input: string | readonly string[];
  /** Refuse the turn (ABORTED) unless the session's head is this seq. */
  readonly expectedLastSeq?: Seq;
  /** Opaque per-execution config, journaled verbatim. */
  readonly config?: Uint8Array;
}

export interface CreateOptions {
  /** A display name (not unique). */
  readonly name?: string;
  /** The harness (default: the host's default harness). */
  readonly harness?: string;
  /** The model id recorded on the session (metadata only, as in the reference). */
  readonly model?: string;
  /** The project (default: the host's default project). */
  readonly project?: string;
}

/** A gate named exactly (the reference's `--execution/--tool-call/--request-seq`), for an exact retry. */
export interface GateTuple {
  readonly executionId: string;
  readonly toolCallId: string;
  readonly requestSeq: Seq;
}

export interface SuspendResult {
  readonly session: Session;
  /** The snapshot the suspend recorded: whether it holds memory, its digest and its local path. */
  readonly snapshot: { readonly memory: boolean; readonly digest: string; readonly local: string };
}

export interface ResumeResult {
  readonly session: Session;
  /** OUTPUT texts the resumed turn committed (none when nothing was pending or it is still parked). */
  readonly outputs: readonly string[];
}

export interface DecisionResult {
  readonly session: Session;
  /** The gate that was decided. */
  readonly executionId: string;
  readonly toolCallId: string;
  readonly requestSeq: bigint;
  readonly approved: boolean;
  /** The APPROVAL_RESULT record (an exact retry returns the same one). */
  readonly decision: LogRecord;
}

type Stub = ServiceClient<MethodsOf<typeof Sessions>>;
type ConsoleStub = ServiceClient<MethodsOf<typeof Console>>;

/** Which sessions `list` and `listPage` return; every filter given must match. */
export interface ListOptions {
  /** The project (default: the host's default project). */
  readonly project?: string;
  /** Sessions per page (0 or absent: the host's default, 50; at most 500). */
  readonly pageSize?: number;
  /** Only sessions of this harness. */
  readonly harness?: string;
  /**
   * Only sessions in one of these compute states: `none`, `live`, `warm`, `cold`, `terminated` (any
   * case). Another word is INVALID_ARGUMENT naming it.
   */
  readonly states?: readonly string[];
  /** Only fork children of this session. */
  readonly parentUid?: string;
  /**
   * Only sessions whose turn status is one of these: `new`, `completed`, `running`, `awaiting`,
   * `decided`, `interrupted`, `invalid`. The host reads each candidate's log, so a page may be short or
   * empty with a cursor set (`list` pages on for you).
   */
  readonly turns?: readonly string[];
}

function filtered(p: ListOptions): boolean {
  return (
    (p.harness ?? "") !== "" || (p.states ?? []).length > 0 || (p.parentUid ?? "") !== "" || (p.turns ?? []).length > 0
  );
}

export class SessionsClient {
  /** @internal */
  constructor(
    private readonly stub: Stub,
    private readonly defaults: CallOptions,
    private readonly views: () => ConsoleStub,
    /** The client's turn stream (§21); without it every turn goes through Sessions/Exec. */
    private readonly turns?: TurnStream,
  ) {}

  private opts(o: CallOptions | undefined) {
    return wireOptions(this.defaults, o);
  }

  /**
   * Runs one turn. Iterate the returned call for its updates as they happen, or await `result()`
   * for the outcome (OUTPUT texts, records, the session after the turn) — or both.
   */
  exec(p: ExecOptions, options?: CallOptions): ExecCall {
    const inputs = (typeof p.input === "string" ? [p.input] : p.input).map((t) => textMessage("user", t));
    const o = this.opts(options);
    const request = {
      session: p.session ?? "",
      harness: p.harness ?? "",
      inputs,
      ...(p.expectedLastSeq !== undefined ? { expectedLastSeq: BigInt(p.expectedLastSeq) } : {}),
      ...(p.config !== undefined ? { config: p.config } : {}),
    };
    // A turn awaited alone goes over the turn stream (§21) when the host serves it; a deadline is a
    // call's, so a call with one goes through Sessions/Exec.
    const turns = this.turns;
    const overStream =
      turns !== undefined && o.deadline === undefined && o.timeoutMs === undefined
        ? () => (turns.served ? turns.turn(create(ExecRequestSchema, request), o.signal) : undefined)
        : undefined;
    return new ExecCall(
      (shape) => {
        let accepted = false;
        const updates = this.stub.exec(request, {
          ...o,
          metadata: { [EXEC_UPDATES_HEADER]: shape },
          onHeader: (md) => {
            accepted = md.get(EXEC_UPDATES_HEADER)[0] === shape;
          },
          // Only a host that echoed `final` packs frames; anything else is decoded as it came.
          ...(shape === "final"
            ? { unpackResponse: (bytes: Buffer) => (accepted ? unpackFrames(bytes) : undefined) }
            : {}),
        });
        return { updates, accepted: () => accepted };
      },
      (uid) => this.get(uid, options),
      overStream,
    );
  }

  /** Creates an empty session (no turn yet). */
  async create(p: CreateOptions = {}, options?: CallOptions): Promise<Session> {
    const s = await call(() =>
      this.stub.createSession(
        {
          session: {
            metadata: { project: p.project ?? "", name: p.name ?? "" },
            harness: p.harness ?? "",
            model: p.model ?? "",
          },
        },
        this.opts(options),
      ),
    );
    return withTurn(s);
  }

  async get(session: string, options?: CallOptions): Promise<Session> {
    return withTurn(await call(() => this.stub.getSession({ uid: session }, this.opts(options))));
  }

  /** One page of a project's sessions, newest first, narrowed by the filters given. */
  async listPage(
    p: ListOptions & { pageToken?: string } = {},
    options?: CallOptions,
  ): Promise<{ sessions: Session[]; nextPageToken: string }> {
    const page = { project: p.project ?? "", pageSize: p.pageSize ?? 0, pageToken: p.pageToken ?? "" };
    const res = await call<{ sessions: WireSession[]; nextPageToken: string }>(() =>
      filtered(p) ? this.filteredPage(p, page, options) : this.stub.listSessions(page, this.opts(options)),
    );
    return { sessions: res.sessions.map(withTurn), nextPageToken: res.nextPageToken };
  }

  private filteredPage(
    p: ListOptions,
    page: { project: string; pageSize: number; pageToken: string },
    options: CallOptions | undefined,
  ) {
    return this.views().listSessions(
      {
        ...page,
        harness: p.harness ?? "",
        states: [...(p.states ?? [])],
        parentUid: p.parentUid ?? "",
        turns: [...(p.turns ?? [])],
      },
      this.opts(options),
    );
  }

  /** Every matching session of a project, newest first, fetched a page at a time as you iterate. */
  async *list(p: ListOptions = {}, options?: CallOptions): AsyncGenerator<Session> {
    let pageToken = "";
    do {
      const page = await this.listPage({ ...p, pageToken }, options);
      yield* page.sessions;
      pageToken = page.nextPageToken;
    } while (pageToken !== "");
  }

  /** The session's records from the journal, in seq order (a range with fromSeq/toSeq). */
  replay(session: string, range: { fromSeq?: Seq; toSeq?: Seq } = {}, options?: CallOptions): AsyncIterable<LogRecord> {
    return stream(
      this.stub.replay(
        {
          session,
          ...(range.fromSeq !== undefined ? { fromSeq: BigInt(range.fromSeq) } : {}),
          ...(range.toSeq !== undefined ? { toSeq: BigInt(range.toSeq) } : {}),
        },
        this.opts(options),
      ),
    );
  }

  /** The OUTPUT texts of every turn of the session, read from the journal (no model call). */
  async outputs(session: string, options?: CallOptions): Promise<string[]> {
    const records: LogRecord[] = [];
    for await (const rec of this.replay(session, {}, options)) records.push(rec);
    return outputsOf(records);
  }

  /** The session as JSON Lines, one proto3-JSON LogRecord per line (`harnesshost export`). */
  async *export(session: string, options?: CallOptions): AsyncGenerator<string> {
    for await (const rec of this.replay(session, {}, options)) yield jsonlLine(rec);
  }

  /**
   * Branches the session at a seq (default: its head) into `count` children (default 1; 0 means 1, as
   * the reference's client), named `childNames` in order when given (as many as children).
   */
  async fork(
    p: { session: string; atSeq?: Seq; count?: number; childNames?: readonly string[] },
    options?: CallOptions,
  ): Promise<Session[]> {
    const res = await call(() =>
      this.stub.fork(
        {
          session: p.session,
          atSeq: BigInt(p.atSeq ?? 0),
          count: p.count ?? 1,
          ...(p.childNames !== undefined ? { childNames: [...p.childNames] } : {}),
        },
        this.opts(options),
      ),
    );
    return res.children.map(withTurn);
  }

  /** Snapshots the session's compute and frees it. */
  async suspend(session: string, options?: CallOptions): Promise<SuspendResult> {
    const s = withTurn(await call(() => this.stub.suspend({ session }, this.opts(options))));
    let snapshot = { memory: false, digest: "", local: "" };
    for await (const rec of this.replay(session, { fromSeq: s.lastSeq, toSeq: s.lastSeq }, options)) {
      if (rec.event?.body.case === "lifecycle") {
        const l = rec.event.body.value;
        snapshot = { memory: l.snapshotMemory, digest: l.snapshotExternalUri, local: l.snapshotLocal };
      }
    }
    return { session: s, snapshot };
  }

  /** Restores the session's compute and re-drives an interrupted or decided turn. */
  async resume(session: string, options?: CallOptions): Promise<ResumeResult> {
    const before = await this.get(session, options);
    const after = withTurn(await call(() => this.stub.resume({ session }, this.opts(options))));
    const records: LogRecord[] = [];
    if (after.lastSeq > before.lastSeq) {
      const range = { fromSeq: before.lastSeq + 1n, toSeq: after.lastSeq };
      for await (const rec of this.replay(session, range, options)) records.push(rec);
    }
    return { session: after, outputs: outputsOf(records) };
  }

  /**
   * Cancels the session's turn (docs/protocol.md §17): a running turn is stopped wherever it runs and
   * recorded as cancelled (resume re-drives it); a parked turn's wait is withdrawn; otherwise nothing
   * changes. With `executionId`, only that turn is cancelled (a turn that already ended: no-op).
   * Resolves to the session afterwards.
   */
  async cancel(p: { session: string; executionId?: string; reason?: string }, options?: CallOptions): Promise<Session> {
    return withTurn(
      await call(() =>
        this.stub.cancel(
          { session: p.session, executionId: p.executionId ?? "", reason: p.reason ?? "" },
          this.opts(options),
        ),
      ),
    );
  }

  /**
   * Deletes the session for good (docs/protocol.md §18): its records and checkpoints are removed, its
   * fork children keep theirs. Refused (ABORTED) while a turn runs on it. Resolves to the session as
   * it was; afterwards it is NOT_FOUND.
   */
  async delete(session: string, options?: CallOptions): Promise<Session> {
    return withTurn(await call(() => this.stub.deleteSession({ uid: session }, this.opts(options))));
  }

  /**
   * Approves the session's pending approval — or exactly the gate `tuple` names (an exact retry returns
   * the committed decision) — and commits the decision only; then resume.
   */
  approve(p: { session: string; reason?: string; tuple?: GateTuple }, options?: CallOptions): Promise<DecisionResult> {
    return this.decideGate(p.session, true, p.reason ?? "", p.tuple, options);
  }

  /** Denies the session's pending approval (or the gate `tuple` names): the tool does not run, the turn gets APPROVAL_DENIED. */
  deny(p: { session: string; reason?: string; tuple?: GateTuple }, options?: CallOptions): Promise<DecisionResult> {
    return this.decideGate(p.session, false, p.reason ?? "", p.tuple, options);
  }

  /** Answers the session's pending question with free text or choice `choice` (1-based). */
  async answer(
    p: { session: string; text: string } | { session: string; choice: number },
    options?: CallOptions,
  ): Promise<DecisionResult> {
    const session = await this.get(p.session, options);
    const tuple = await call(async () => pendingTuple(session));
    const text = await call(async () => answerText(pendingQuestion(session, tuple), p));
    return this.decide(p.session, tuple, true, text, options);
  }

  private async decideGate(
    session: string,
    approved: boolean,
    reason: string,
    given: GateTuple | undefined,
    options: CallOptions | undefined,
  ): Promise<DecisionResult> {
    const tuple = given ?? (await call(async () => pendingTuple(await this.get(session, options))));
    return this.decide(session, tuple, approved, reason, options);
  }

  private async decide(
    session: string,
    tuple: PendingTuple | GateTuple,
    approved: boolean,
    reason: string,
    options: CallOptions | undefined,
  ): Promise<DecisionResult> {
    const res = await call(() =>
      this.stub.approve(
        {
          session,
          executionId: tuple.executionId,
          toolCallId: tuple.toolCallId,
          requestSeq: BigInt(tuple.requestSeq),
          approved,
          reason,
        },
        this.opts(options),
      ),
    );
    if (!res.session || !res.decision)
      throw new HarnessHostError(ErrorCode.Internal, "Approve answered without a session or decision");
    const gate = { executionId: tuple.executionId, toolCallId: tuple.toolCallId, requestSeq: BigInt(tuple.requestSeq) };
    return { session: withTurn(res.session), ...gate, approved, decision: res.decision };
  }
}
