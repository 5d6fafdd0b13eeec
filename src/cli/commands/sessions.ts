// Session commands: create, exec, replay, fork, get, list, suspend, resume, approve, deny, answer, cancel, delete. Invariant: with --json each prints
// exactly one JSON document on stdout; errors go to stderr with a non-zero exit.
import { toJson } from "@bufbuild/protobuf";
import { ComputeState, ExecState, SessionSchema, type Session } from "../../gen/agentsessions/v1/session_pb.js";
import type { Question } from "../../controller/questions.js";
import { pendingQuestion } from "../../client/decisions.js";
import type { DecisionOutcome, GateTuple } from "../api.js";
import { goRecordLine } from "../record-lines.js";
import { ExitCode } from "../exit-codes.js";
import {
  type CommandIo,
  type FlagValues,
  HOST_FLAGS,
  int,
  json,
  requireStr,
  str,
  UsageError,
  type Command,
  type CommandContext,
} from "../command.js";
import {
  CHECKPOINT_ANNOTATION,
  type CheckpointAnnotation,
  EFFECTS_ANNOTATION,
  TURN_ANNOTATION,
  type TurnAnnotation,
} from "../../wire/annotations.js";

/** The host's turn status of the session (the `harnesshost.dev/turn` annotation), when it sent one. */
function turnOf(s: Session): TurnAnnotation | undefined {
  const raw = s.annotations[TURN_ANNOTATION];
  if (raw === undefined) return undefined;
  try {
    return JSON.parse(raw) as TurnAnnotation;
  } catch {
    return undefined; // shown as is in annotations, not interpreted
  }
}

/** The host's checkpoint status of the session (the `harnesshost.dev/checkpoint` annotation), when sent. */
function checkpointOf(s: Session): CheckpointAnnotation | undefined {
  const raw = s.annotations[CHECKPOINT_ANNOTATION];
  if (raw === undefined) return undefined;
  try {
    return JSON.parse(raw) as CheckpointAnnotation;
  } catch {
    return undefined; // shown as is in annotations, not interpreted
  }
}

/** `get`'s checkpoint line: the newest checkpoint's seq and the last per-turn failure, if any. */
function checkpointLines(s: Session): string[] {
  const c = checkpointOf(s);
  if (c === undefined) return [];
  const f = c.last_failure;
  const failure = f
    ? ` failures=${c.failures ?? 1} last_failure_seq=${f.seq} last_failure_at=${f.at} reason=${JSON.stringify(f.reason)}`
    : "";
  return [`  checkpoint: last_seq=${c.last_seq}${failure}`];
}

/** The status words of docs/cli.md ("Session status"): what the last turn left and what continues it. */
function turnWords(t: TurnAnnotation | undefined): { middle: string; next: string } {
  if (t === undefined) return { middle: "", next: "" };
  const inherited = t.inherited === true ? " inherited=true" : "";
  const decided = t.wait === "question" ? "answered" : t.approved === true ? "approved" : "denied";
  const middle =
    t.status === "awaiting"
      ? ` wait=${t.wait ?? "approval"}${inherited}`
      : t.status === "decided"
        ? ` wait=${t.wait ?? "approval"} decided=${decided}${inherited}`
        : t.status === "interrupted" || t.status === "invalid" || t.status === "running"
          ? ` turn=${t.status}${inherited}`
          : "";
  return { middle, next: t.next !== undefined ? ` next=${t.next}` : "" };
}

function sessionLine(s: Session): string {
  const state = (ComputeState[s.computeState] ?? "").replace("COMPUTE_", "");
  const exec = (ExecState[s.execState] ?? "").replace("EXEC_", "");
  const parent = s.parentUid ? ` parent=${s.parentUid}@${s.forkSeq}` : "";
  const p = s.pendingApproval;
  const pending = p ? ` pending_approval=${p.executionId}/${p.toolCallId}@${p.requestSeq}` : "";
  const { middle, next } = turnWords(turnOf(s));
  return `session ${s.metadata?.uid ?? ""} harness=${s.harness} last_seq=${s.lastSeq} compute=${state} exec=${exec}${middle}${parent}${pending}${next}`;
}

/** The connection flags this command was given, to repeat in a suggested command. */
function connectionFlags(values: FlagValues): string {
  const out: string[] = [];
  for (const flag of ["server", "journal", "data", "token-file", "tls-ca", "tls-cert", "tls-key"]) {
    const v = str(values, flag);
    if (v !== undefined) out.push(`--${flag} ${/^[\w./:@=+-]+$/.test(v) ? v : JSON.stringify(v)}`);
  }
  return out.length > 0 ? ` ${out.join(" ")}` : "";
}

/** `get`'s lines after the status line: why the turn stopped and the command that continues it. */
function continuation(s: Session, values: FlagValues): string[] {
  const t = turnOf(s);
  if (t === undefined) return [];
  const uid = s.metadata?.uid ?? "";
  const lines: string[] = [];
  if (t.error !== undefined) lines.push(`  ${t.status === "invalid" ? "invalid log" : "turn cut"}: ${t.error}`);
  const args: Record<NonNullable<TurnAnnotation["next"]>, string> = {
    exec: " --input TEXT",
    approve: " [--deny] [--reason TEXT]",
    answer: " (--text TEXT | --choice N)",
    resume: "",
  };
  if (t.next !== undefined)
    lines.push(`  next: harnesshost ${t.next} --session ${uid}${connectionFlags(values)}${args[t.next]}`);
  return lines;
}

function sessionJson(s: Session): unknown {
  const doc = toJson(SessionSchema, s, { useProtoFieldName: true }) as Record<string, unknown>;
  const turn = turnOf(s);
  if (turn !== undefined) doc["turn"] = turn;
  return doc;
}

/** `get --json`: the Session, plus the host's effect counters for it when it reports any. */
function sessionJsonWithEffects(s: Session): unknown {
  const doc = sessionJson(s) as Record<string, unknown>;
  const checkpoint = checkpointOf(s);
  if (checkpoint !== undefined) doc["checkpoint"] = checkpoint;
  const raw = s.annotations[EFFECTS_ANNOTATION];
  if (raw !== undefined) {
    try {
      doc["effects"] = JSON.parse(raw) as unknown;
    } catch {
      // A malformed annotation is shown as is (in annotations) and not interpreted.
    }
  }
  return doc;
}

/** What a parked turn waits for: an approval, or a question (its text and choices, from the turn annotation). */
function awaitingLine(s: Session): string | undefined {
  const p = s.pendingApproval;
  if (!p) return undefined;
  const at = `execution=${p.executionId} tool_call=${p.toolCallId} request_seq=${p.requestSeq}`;
  let q: Question;
  try {
    q = pendingQuestion(s, { executionId: p.executionId, toolCallId: p.toolCallId, requestSeq: Number(p.requestSeq) });
  } catch {
    return `awaiting approval: ${at}`;
  }
  const choices = q.choices.map((c, i) => `--choice ${i + 1} ${c}`);
  const how = [...choices, ...(q.allowFreeText ? ["--text TEXT"] : [])].join(", ");
  return `awaiting an answer: ${q.question} (answer with ${how}) ${at}`;
}

/**
 * The warning `exec` prints when the checkpoint of the turn it just ran failed (the turn stands; exit
 * status unchanged): the host's last per-turn failure is this turn's END record.
 */
function failedCheckpointLine(s: Session, lastSeq: number): string | undefined {
  const f = checkpointOf(s)?.last_failure;
  if (f === undefined || f.seq !== lastSeq) return undefined;
  return `harnesshost: warning: the turn is committed but its checkpoint failed: ${f.reason} — until a checkpoint succeeds, losing the harness node or the host loses the session past seq ${checkpointOf(s)?.last_seq ?? 0}, and suspend fails the same way (docs/operations.md, "Checkpoint failures")`;
}

/**
 * exec's human output: every OUTPUT of the turn on its own line, in commit order, with model text
 * streamed as it arrives (when the io can write partial lines). Streamed text that an OUTPUT then
 * commits is not printed twice; an OUTPUT that differs from the streamed text is printed after it.
 */
class OutputPrinter {
  private partial = "";
  printed = false;
  constructor(private readonly io: CommandIo) {}

  delta(chunk: string): void {
    if (this.io.write === undefined) return;
    this.io.write(chunk);
    this.partial += chunk;
    this.printed = true;
  }

  output(text: string): void {
    const streamed = this.partial;
    this.endLine();
    if (streamed === "" || streamed.trimEnd() !== text.trimEnd()) this.io.out(text);
    this.printed = true;
  }

  end(): void {
    this.endLine();
  }

  private endLine(): void {
    if (this.partial !== "" && !this.partial.endsWith("\n")) this.io.write?.("\n");
    this.partial = "";
  }
}

export const createCommand: Command = {
  name: "create",
  usage: "create [--name N] [--harness H] [--model M] [--project P] [--json]",
  options: { ...HOST_FLAGS, name: { type: "string" }, harness: { type: "string" }, model: { type: "string" } },
  async run(ctx) {
    const api = await ctx.api({ create: true });
    try {
      const s = await api.create({
        name: str(ctx.values, "name") ?? "",
        harness: str(ctx.values, "harness") ?? "",
        model: str(ctx.values, "model") ?? "",
        project: str(ctx.values, "project") ?? "",
      });
      if (json(ctx.values)) ctx.out(JSON.stringify(sessionJson(s)));
      else ctx.out(s.metadata?.uid ?? "");
      return 0;
    } finally {
      await api.close();
    }
  },
};

export const execCommand: Command = {
  name: "exec",
  usage: "exec [--session UID] [--harness NAME] --input TEXT [--input TEXT…] [--expected-last-seq N] [--json]",
  options: {
    ...HOST_FLAGS,
    session: { type: "string" },
    harness: { type: "string" },
    input: { type: "string", multiple: true },
    "expected-last-seq": { type: "string" },
  },
  async run(ctx) {
    const inputs = (ctx.values["input"] as string[] | undefined) ?? [];
    if (inputs.length === 0) throw new UsageError("--input is required (repeat it for several inputs)");
    const session = str(ctx.values, "session");
    if (session === "")
      throw new UsageError(
        "--session is empty (did a `S=$(…)` fail?); give a session uid, or omit --session to start a new session",
      );
    const harness = str(ctx.values, "harness");
    const expected =
      str(ctx.values, "expected-last-seq") !== undefined ? int(ctx.values, "expected-last-seq", 0) : undefined;
    const api = await ctx.api({ create: session === undefined });
    try {
      const printer = json(ctx.values) ? undefined : new OutputPrinter(ctx);
      const res = await api.exec({
        ...(session !== undefined ? { session } : {}),
        ...(harness ? { harness } : {}),
        inputs,
        ...(expected !== undefined ? { expectedLastSeq: expected } : {}),
        ...(printer
          ? {
              onDelta: (chunk: string) => printer.delta(chunk),
              onOutput: (text: string) => printer.output(text),
              ...(session === undefined ? { onSession: (uid: string) => ctx.err(`session ${uid}`) } : {}),
            }
          : {}),
      });
      const uid = res.session.metadata?.uid ?? "";
      const awaiting = awaitingLine(res.session);
      const pending = res.session.pendingApproval;
      const checkpoint = failedCheckpointLine(res.session, res.lastSeq);
      if (checkpoint !== undefined) ctx.err(checkpoint);
      if (json(ctx.values)) {
        ctx.out(
          JSON.stringify({
            session: uid,
            output: res.output,
            last_seq: res.lastSeq,
            ...(pending
              ? {
                  parked: awaiting?.startsWith("awaiting an answer") === true ? "question" : "approval",
                  pending_approval: {
                    execution_id: pending.executionId,
                    tool_call_id: pending.toolCallId,
                    request_seq: Number(pending.requestSeq),
                  },
                }
              : {}),
          }),
        );
      } else if (printer) {
        printer.end();
        if (!printer.printed && !awaiting) ctx.out("");
        if (awaiting) ctx.out(awaiting);
      }
      // Parked is not a failure (the turn's records are committed), but a script must tell it from done.
      return pending ? ExitCode.Parked : ExitCode.Ok;
    } finally {
      await api.close();
    }
  },
};

/** The output formats of `replay`: ours (the re-executed turns' outputs) or the reference's record lines. */
const REPLAY_FORMATS = ["text", "go"] as const;

export const replayCommand: Command = {
  name: "replay",
  readOnly: true,
  usage: "replay --session UID [--json] | replay --session UID --format go [--from N]",
  options: { ...HOST_FLAGS, session: { type: "string" }, format: { type: "string" }, from: { type: "string" } },
  async run(ctx) {
    const session = requireStr(ctx.values, "session");
    const format = REPLAY_FORMATS.find((f) => f === (str(ctx.values, "format") ?? "text"));
    if (format === undefined) throw new UsageError(`--format must be one of ${REPLAY_FORMATS.join(", ")}`);
    const goLines = format === "go";
    if (!goLines && str(ctx.values, "from") !== undefined)
      throw new UsageError("--from goes with --format go (the records from seq N); re-execution starts at seq 1");
    if (goLines && json(ctx.values)) throw new UsageError("--format go prints record lines; --json is export's format");
    const from = int(ctx.values, "from", 1, 1);
    const api = await ctx.api();
    try {
      if (goLines) {
        for await (const rec of api.records(session, from)) ctx.out(goRecordLine(rec));
        return 0;
      }
      const res = await api.replay(session);
      if (json(ctx.values)) ctx.out(JSON.stringify({ session, outputs: res.outputs, model_calls: res.modelCalls }));
      else for (const o of res.outputs) ctx.out(o);
      return 0;
    } finally {
      await api.close();
    }
  },
};

export const forkCommand: Command = {
  name: "fork",
  usage: "fork --session UID [--at N] [--count K] [--names A,B,…] [--json]",
  options: {
    ...HOST_FLAGS,
    session: { type: "string" },
    at: { type: "string" },
    count: { type: "string" },
    names: { type: "string" },
  },
  async run(ctx) {
    const session = requireStr(ctx.values, "session");
    const atSeq = int(ctx.values, "at", 0);
    // 0 means 1, as the reference's client and the Fork RPC take it.
    const count = Math.max(1, int(ctx.values, "count", 1, 0));
    if (count > 128) throw new UsageError("--count must be 1..128");
    const names = str(ctx.values, "names");
    const childNames = names === undefined || names === "" ? undefined : names.split(",");
    if (childNames !== undefined && childNames.length !== count)
      throw new UsageError(`--names has ${childNames.length} names for ${count} children; give one per child`);
    const api = await ctx.api();
    try {
      const children = await api.fork({ session, atSeq, count, ...(childNames ? { childNames } : {}) });
      const uids = children.map((c) => c.metadata?.uid ?? "");
      if (json(ctx.values)) ctx.out(JSON.stringify({ children: uids }));
      else for (const u of uids) ctx.out(u);
      return 0;
    } finally {
      await api.close();
    }
  },
};

export const getCommand: Command = {
  name: "get",
  readOnly: true,
  usage: "get --session UID [--json]",
  options: { ...HOST_FLAGS, session: { type: "string" } },
  async run(ctx) {
    const session = requireStr(ctx.values, "session");
    const api = await ctx.api();
    try {
      const s = await api.get(session);
      if (json(ctx.values)) ctx.out(JSON.stringify(sessionJsonWithEffects(s)));
      else for (const line of [sessionLine(s), ...checkpointLines(s), ...continuation(s, ctx.values)]) ctx.out(line);
      return 0;
    } finally {
      await api.close();
    }
  },
};

export const listCommand: Command = {
  name: "list",
  readOnly: true,
  usage:
    "list [--project P] [--harness NAME] [--state WORD[,WORD…]]… [--turn WORD[,WORD…]]… [--parent UID] [--page-size N] [--json]",
  options: {
    ...HOST_FLAGS,
    "page-size": { type: "string" },
    harness: { type: "string" },
    state: { type: "string", multiple: true },
    turn: { type: "string", multiple: true },
    parent: { type: "string" },
  },
  async run(ctx) {
    // The host checks the words (states: wire/compute-states.ts; turn statuses: wire/annotations.ts): an
    // unknown one exits 2 naming it.
    const words = (name: string): string[] =>
      ((ctx.values[name] as string[] | undefined) ?? []).flatMap((s) => s.split(",")).filter((s) => s.trim() !== "");
    const filter = {
      project: str(ctx.values, "project") ?? "",
      pageSize: int(ctx.values, "page-size", 0),
      harness: str(ctx.values, "harness") ?? "",
      states: words("state"),
      parentUid: str(ctx.values, "parent") ?? "",
      turns: words("turn"),
    };
    const api = await ctx.api();
    try {
      const sessions = await api.list(filter);
      if (json(ctx.values)) ctx.out(JSON.stringify({ sessions: sessions.map(sessionJson) }));
      else for (const s of sessions) ctx.out(sessionLine(s));
      return 0;
    } finally {
      await api.close();
    }
  },
};

export const suspendCommand: Command = {
  name: "suspend",
  usage: "suspend --session UID [--json]",
  options: { ...HOST_FLAGS, session: { type: "string" } },
  async run(ctx) {
    const session = requireStr(ctx.values, "session");
    const api = await ctx.api();
    try {
      const res = await api.suspend(session);
      if (json(ctx.values)) ctx.out(JSON.stringify({ session: sessionJson(res.session), snapshot: res.snapshot }));
      else
        ctx.out(
          `${sessionLine(res.session)} snapshot memory=${res.snapshot.memory}${res.snapshot.digest ? ` digest=${res.snapshot.digest}` : ""}`,
        );
      return 0;
    } finally {
      await api.close();
    }
  },
};

export const resumeCommand: Command = {
  name: "resume",
  usage: "resume --session UID [--json]",
  options: { ...HOST_FLAGS, session: { type: "string" } },
  async run(ctx) {
    const session = requireStr(ctx.values, "session");
    const api = await ctx.api();
    try {
      const res = await api.resumeTurn(session);
      if (json(ctx.values)) {
        ctx.out(JSON.stringify({ ...(sessionJson(res.session) as Record<string, unknown>), outputs: res.outputs }));
      } else {
        for (const o of res.outputs) ctx.out(o);
        ctx.out(sessionLine(res.session));
      }
      return 0;
    } finally {
      await api.close();
    }
  },
};

function decisionOut(ctx: CommandContext, res: DecisionOutcome, what: string): void {
  const decisionSeq = Number(res.decision.seq);
  if (json(ctx.values)) {
    ctx.out(
      JSON.stringify({
        session: res.session.metadata?.uid ?? "",
        execution_id: res.executionId,
        tool_call_id: res.toolCallId,
        request_seq: res.requestSeq,
        approved: res.approved,
        decision_seq: decisionSeq,
      }),
    );
  } else {
    ctx.out(
      `${what} ${res.executionId}/${res.toolCallId} request_seq=${res.requestSeq} decision_seq=${decisionSeq}; run resume to continue the turn`,
    );
  }
}

/** The gate named by --execution/--tool-call/--request-seq: all three, or none (discover the pending one). */
function gateTuple(values: FlagValues): GateTuple | undefined {
  const given = ["execution", "tool-call", "request-seq"].filter((f) => values[f] !== undefined);
  if (given.length === 0) return undefined;
  const executionId = str(values, "execution") ?? "";
  const toolCallId = str(values, "tool-call") ?? "";
  if (given.length !== 3 || executionId === "" || toolCallId === "")
    throw new UsageError(
      "give the whole --execution, --tool-call and --request-seq tuple, or none of them to decide the pending approval",
    );
  return { executionId, toolCallId, requestSeq: int(values, "request-seq", 0, 1) };
}

/** The session of a decision: `--session UID` or one positional UID (as agentctl takes it), not both. */
function decisionSession(ctx: CommandContext): string {
  const flag = str(ctx.values, "session");
  if (ctx.positionals.length > 1 || (ctx.positionals.length === 1 && flag !== undefined))
    throw new UsageError("give exactly one session uid, positional or --session");
  const uid = flag ?? ctx.positionals[0];
  if (uid === undefined || uid === "") throw new UsageError("--session is required");
  return uid;
}

/** `approve` (or `--deny`) and `deny`: commit the decision only; `resume` continues the turn. */
function decisionCommand(name: "approve" | "deny"): Command {
  return {
    name,
    usage: `${name} (--session UID | UID) [--execution ID --tool-call ID --request-seq N]${name === "approve" ? " [--deny]" : ""} [--reason TEXT] [--json]`,
    options: {
      ...HOST_FLAGS,
      session: { type: "string" },
      ...(name === "approve" ? { deny: { type: "boolean" } } : {}),
      reason: { type: "string" },
      execution: { type: "string" },
      "tool-call": { type: "string" },
      "request-seq": { type: "string" },
    },
    async run(ctx) {
      const session = decisionSession(ctx);
      const approved = name === "approve" && ctx.values["deny"] !== true;
      const tuple = gateTuple(ctx.values);
      const api = await ctx.api();
      try {
        const res = await api.approve({
          session,
          approved,
          reason: str(ctx.values, "reason") ?? "",
          ...(tuple ? { tuple } : {}),
        });
        decisionOut(ctx, res, approved ? "approved" : "denied");
        return 0;
      } finally {
        await api.close();
      }
    },
  };
}

export const approveCommand: Command = decisionCommand("approve");
export const denyCommand: Command = decisionCommand("deny");

export const answerCommand: Command = {
  name: "answer",
  usage: "answer --session UID (--text TEXT | --choice N) [--json]",
  options: { ...HOST_FLAGS, session: { type: "string" }, text: { type: "string" }, choice: { type: "string" } },
  async run(ctx) {
    const session = requireStr(ctx.values, "session");
    const text = str(ctx.values, "text");
    const hasChoice = str(ctx.values, "choice") !== undefined;
    if ((text === undefined) === !hasChoice) throw new UsageError("give exactly one of --text or --choice");
    const choice = hasChoice ? int(ctx.values, "choice", 1, 1) : undefined;
    const api = await ctx.api();
    try {
      const res = await api.answer({
        session,
        ...(text !== undefined ? { text } : {}),
        ...(choice !== undefined ? { choice } : {}),
      });
      decisionOut(ctx, res, "answered");
      return 0;
    } finally {
      await api.close();
    }
  },
};

export const cancelCommand: Command = {
  name: "cancel",
  usage: "cancel --session UID [--execution ID] [--reason TEXT] [--json]",
  options: {
    ...HOST_FLAGS,
    session: { type: "string" },
    execution: { type: "string" },
    reason: { type: "string" },
  },
  async run(ctx) {
    const session = requireStr(ctx.values, "session");
    const execution = str(ctx.values, "execution");
    if (execution === "") throw new UsageError("--execution is empty; give an execution id, or omit it");
    const api = await ctx.api();
    try {
      const s = await api.cancel({
        session,
        ...(execution !== undefined ? { executionId: execution } : {}),
        reason: str(ctx.values, "reason") ?? "",
      });
      if (json(ctx.values)) ctx.out(JSON.stringify(sessionJson(s)));
      else for (const line of [sessionLine(s), ...continuation(s, ctx.values)]) ctx.out(line);
      return 0;
    } finally {
      await api.close();
    }
  },
};

export const deleteCommand: Command = {
  name: "delete",
  usage: "delete --session UID --yes [--json]",
  options: { ...HOST_FLAGS, session: { type: "string" }, yes: { type: "boolean" } },
  async run(ctx) {
    const session = requireStr(ctx.values, "session");
    if (ctx.values["yes"] !== true)
      throw new UsageError(
        `delete removes session ${session} and every record of it for good (its fork children stay); add --yes to confirm`,
      );
    const api = await ctx.api();
    try {
      const s = await api.delete(session);
      const uid = s.metadata?.uid ?? session;
      if (json(ctx.values)) ctx.out(JSON.stringify({ deleted: uid, last_seq: Number(s.lastSeq) }));
      else ctx.out(`deleted session ${uid} (${s.lastSeq} records)`);
      return 0;
    } finally {
      await api.close();
    }
  },
};

export const upgradeCommand: Command = {
  name: "upgrade",
  usage: "upgrade --session UID --to-version V [--json]",
  options: { ...HOST_FLAGS, session: { type: "string" }, "to-version": { type: "string" } },
  async run(ctx) {
    const session = requireStr(ctx.values, "session");
    const toVersion = requireStr(ctx.values, "to-version");
    const api = await ctx.api();
    try {
      const res = await api.upgrade({ session, toVersion });
      if (json(ctx.values)) ctx.out(JSON.stringify(res));
      else if (res.upgradeSeq === 0) ctx.out(`session ${session} already on version ${res.toVersion}; nothing written`);
      else
        ctx.out(
          `session ${session} upgraded from version ${JSON.stringify(res.fromVersion)} to ${JSON.stringify(res.toVersion)} at seq ${res.upgradeSeq}${res.snapshot ? ` snapshot=${res.snapshot}` : ` replayed_turns=${res.replayedTurns}`}`,
        );
      return 0;
    } finally {
      await api.close();
    }
  },
};
