// One session of a test host, with a method per operation an author's test needs. Invariant: every
// method goes through the host's Placer — the same guard, chain check, admission, gates and journal as
// `serve` — so what a test sees is what a served session does; nothing here writes the journal itself.
import type { JsonObject } from "@bufbuild/protobuf";
import type { ApprovalRef } from "../controller/approvals.js";
import { ASK_TOOL, questionOf } from "../controller/questions.js";
import { answerText } from "../client/decisions.js";
import { ErrorCode, HostError } from "../errors/index.js";
import { EventKind, Lifecycle_Kind, type Message } from "../gen/agentsessions/v1/common_pb.js";
import type { Host } from "../host/host.js";
import type { JournalRecord, SessionInfo } from "../journal/types.js";
import { newSessionUid } from "../controller/ids.js";
import { textMessage } from "../model/text.js";

/** The gate a parked turn waits on: an approval of a tool call, or a question to the operator. */
export interface PendingGate {
  readonly kind: "approval" | "question";
  /** The gated call's tool (`harnesshost.ask` for a question) and arguments. */
  readonly tool: string;
  readonly args: JsonObject;
  /** For a question: its text and choices. */
  readonly question?: string;
  readonly choices?: readonly string[];
  readonly ref: ApprovalRef;
}

/** What one exec or resume did. */
export interface TurnOutcome {
  readonly executionId: string;
  /** The text of every OUTPUT of the turn, in order. */
  readonly outputs: readonly string[];
  /** The last output ("" when there was none). */
  readonly text: string;
  /** Set when the turn parked at a gate (approve, deny or answer, then resume). */
  readonly parked?: PendingGate;
}

/**
 * A record's kind without its `EVENT_` prefix — `INPUT`, `MODEL_CALL`, `TOOL_CALL`, … — and a lifecycle
 * record's own kind (`LIFECYCLE_SUSPEND`, `LIFECYCLE_RESUME`, `LIFECYCLE_FORK`, …).
 */
export function recordKind(record: JournalRecord): string {
  const body = record.event.body;
  if (body.case === "lifecycle") return Lifecycle_Kind[body.value.kind] ?? "LIFECYCLE";
  return (EventKind[record.event.kind] ?? String(record.event.kind)).replace(/^EVENT_/, "");
}

function signal(): AbortSignal {
  return new AbortController().signal;
}

export class TestSession {
  constructor(
    private readonly host: Host,
    readonly uid: string,
  ) {}

  /** Runs one turn with these inputs (text becomes a user message). Rejects with the turn's error. */
  async exec(...inputs: readonly (string | Message)[]): Promise<TurnOutcome> {
    const messages = inputs.map((m) => (typeof m === "string" ? textMessage("user", m) : m));
    const turn = await this.host.placer.exec({ session: this.uid, inputs: messages, signal: signal() });
    return this.outcome(turn.executionId, turn.outputs, turn.parked);
  }

  /** Resumes the session: continues a decided or interrupted turn (outputs empty when there was none). */
  async resume(): Promise<TurnOutcome> {
    const res = await this.host.placer.resume(this.uid, signal());
    return this.outcome(res.turn?.executionId ?? "", res.turn?.outputs ?? [], res.parked);
  }

  /** Suspends the session (snapshot, then its compute is freed); the next exec or resume restores it. */
  async suspend(): Promise<void> {
    await this.host.placer.suspend(this.uid, signal());
  }

  /** Forks the session at `atSeq` (default: the head) into `count` children (default 1). */
  async fork(opts: { readonly atSeq?: number; readonly count?: number } = {}): Promise<TestSession[]> {
    const parent = await this.info();
    const children = Array.from({ length: opts.count ?? 1 }, () => ({
      uid: newSessionUid(),
      project: parent.project,
      harness: parent.harness,
      model: parent.model,
      annotations: parent.annotations,
    }));
    const res = await this.host.placer.fork({ parent: this.uid, atSeq: opts.atSeq ?? 0, children, signal: signal() });
    return res.children.map((c) => new TestSession(this.host, c.uid));
  }

  /** The gate the session's parked turn waits on, if any. */
  async pending(): Promise<PendingGate | undefined> {
    const gate = (await this.host.placer.sessionLog(this.uid)).pendingApproval();
    if (!gate) return undefined;
    const args = gate.call.args ?? {};
    if (gate.call.tool !== ASK_TOOL) return { kind: "approval", tool: gate.call.tool, args, ref: gate.ref };
    const q = questionOf(gate.call);
    return { kind: "question", tool: ASK_TOOL, args, question: q.question, choices: q.choices, ref: gate.ref };
  }

  /** Approves the pending tool call (commits only the decision: then resume). */
  async approve(reason = "approved by a test"): Promise<void> {
    await this.decide("approval", true, reason);
  }

  /** Denies the pending tool call (the model sees a denial): then resume. */
  async deny(reason = "denied by a test"): Promise<void> {
    await this.decide("approval", false, reason);
  }

  /** Answers the pending question with text or choice N (1-based): then resume. */
  async answer(answer: string | { readonly choice: number }): Promise<void> {
    const gate = await this.gate("question");
    const text = answerText(
      { question: gate.question ?? "", choices: gate.choices ?? [], allowFreeText: true },
      typeof answer === "string" ? { text: answer } : answer,
    );
    await this.host.placer.approve(this.uid, { ...gate.ref, approved: true, reason: text });
  }

  /** Every record of the session, in seq order. */
  async records(): Promise<JournalRecord[]> {
    return this.host.journal.readRange(this.uid);
  }

  /** The kind of every record, in order (`INPUT`, `MODEL_CALL`, `OUTPUT`, `TOOL_CALL`, …). */
  async kinds(): Promise<string[]> {
    return (await this.records()).map(recordKind);
  }

  /** Verifies the session's hash chain; throws (DATA_LOSS) naming the first bad record. */
  async verify(): Promise<number> {
    const res = await this.host.journal.verify(this.uid);
    if (!res.ok) throw new HostError(ErrorCode.DataLoss, `session ${this.uid}: ${JSON.stringify(res)}`);
    return res.records;
  }

  /** Re-runs every completed turn from the journal with zero model calls; their outputs, in order. */
  async replay(): Promise<readonly string[]> {
    return (await this.host.placer.replay(this.uid, signal())).outputs;
  }

  async info(): Promise<SessionInfo> {
    return this.host.getSession(this.uid);
  }

  private async gate(kind: PendingGate["kind"]): Promise<PendingGate> {
    const gate = await this.pending();
    if (!gate) throw new HostError(ErrorCode.FailedPrecondition, `session ${this.uid} has no pending ${kind}`);
    if (gate.kind !== kind)
      throw new HostError(
        ErrorCode.FailedPrecondition,
        `session ${this.uid} waits on a ${gate.kind}, not an ${kind}; use ${gate.kind === "question" ? "answer" : "approve or deny"}`,
      );
    return gate;
  }

  private async decide(kind: PendingGate["kind"], approved: boolean, reason: string): Promise<void> {
    const gate = await this.gate(kind);
    await this.host.placer.approve(this.uid, { ...gate.ref, approved, reason });
  }

  private async outcome(
    executionId: string,
    outputs: readonly string[],
    parked: ApprovalRef | undefined,
  ): Promise<TurnOutcome> {
    const base = { executionId, outputs, text: outputs.at(-1) ?? "" };
    if (!parked) return base;
    const gate = await this.pending();
    return gate ? { ...base, parked: gate } : base;
  }
}
