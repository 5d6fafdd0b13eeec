// Session commands: exec, replay, fork, get, list, suspend, resume, approve, answer. Invariant: with --json each prints
// exactly one JSON document on stdout; errors go to stderr with a non-zero exit.
import { toJson } from "@bufbuild/protobuf";
import { ComputeState, ExecState, SessionSchema, type Session } from "../../gen/agentsessions/v1/session_pb.js";
import type { DecisionOutcome } from "../api.js";
import { HOST_FLAGS, int, json, requireStr, str, UsageError, type Command, type CommandContext } from "../command.js";
import { EFFECTS_ANNOTATION } from "../../server/annotations.js";

function sessionLine(s: Session): string {
  const state = (ComputeState[s.computeState] ?? "").replace("COMPUTE_", "");
  const exec = (ExecState[s.execState] ?? "").replace("EXEC_", "");
  const parent = s.parentUid ? ` parent=${s.parentUid}@${s.forkSeq}` : "";
  const p = s.pendingApproval;
  const pending = p ? ` pending_approval=${p.executionId}/${p.toolCallId}@${p.requestSeq}` : "";
  return `session ${s.metadata?.uid ?? ""} harness=${s.harness} last_seq=${s.lastSeq} compute=${state} exec=${exec}${parent}${pending}`;
}

function sessionJson(s: Session): unknown {
  return toJson(SessionSchema, s, { useProtoFieldName: true });
}

/** `get --json`: the Session, plus the host's effect counters for it when it reports any. */
function sessionJsonWithEffects(s: Session): unknown {
  const doc = sessionJson(s) as Record<string, unknown>;
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

/** The line `exec` prints for a turn that parked on an approval. */
function awaitingLine(s: Session): string | undefined {
  const p = s.pendingApproval;
  return p
    ? `awaiting approval: execution=${p.executionId} tool_call=${p.toolCallId} request_seq=${p.requestSeq}`
    : undefined;
}

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
      const streaming = !json(ctx.values) && str(ctx.values, "server") !== undefined;
      let streamed = false;
      const res = await api.exec({
        ...(session ? { session } : {}),
        ...(harness ? { harness } : {}),
        inputs,
        ...(expected !== undefined ? { expectedLastSeq: expected } : {}),
        ...(streaming
          ? {
              onDelta: (chunk: string) => {
                streamed = true;
                process.stdout.write(chunk);
              },
            }
          : {}),
      });
      const uid = res.session.metadata?.uid ?? "";
      const awaiting = awaitingLine(res.session);
      const pending = res.session.pendingApproval;
      if (json(ctx.values)) {
        ctx.out(
          JSON.stringify({
            session: uid,
            output: res.output,
            last_seq: res.lastSeq,
            ...(pending
              ? {
                  pending_approval: {
                    execution_id: pending.executionId,
                    tool_call_id: pending.toolCallId,
                    request_seq: Number(pending.requestSeq),
                  },
                }
              : {}),
          }),
        );
      } else {
        if (!session) ctx.err(`session ${uid}`);
        if (streamed) ctx.out("");
        else if (res.output !== "" || !awaiting) ctx.out(res.output);
        if (awaiting) ctx.out(awaiting);
      }
      return 0;
    } finally {
      await api.close();
    }
  },
};

export const replayCommand: Command = {
  name: "replay",
  readOnly: true,
  usage: "replay --session UID [--json]",
  options: { ...HOST_FLAGS, session: { type: "string" } },
  async run(ctx) {
    const session = requireStr(ctx.values, "session");
    const api = await ctx.api();
    try {
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
  usage: "fork --session UID [--at N] [--count K] [--json]",
  options: { ...HOST_FLAGS, session: { type: "string" }, at: { type: "string" }, count: { type: "string" } },
  async run(ctx) {
    const session = requireStr(ctx.values, "session");
    const atSeq = int(ctx.values, "at", 0);
    const count = int(ctx.values, "count", 1, 1);
    if (count > 128) throw new UsageError("--count must be 1..128");
    const api = await ctx.api();
    try {
      const children = await api.fork({ session, atSeq, count });
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
      ctx.out(json(ctx.values) ? JSON.stringify(sessionJsonWithEffects(s)) : sessionLine(s));
      return 0;
    } finally {
      await api.close();
    }
  },
};

export const listCommand: Command = {
  name: "list",
  readOnly: true,
  usage: "list [--project P] [--page-size N] [--json]",
  options: { ...HOST_FLAGS, "page-size": { type: "string" } },
  async run(ctx) {
    const api = await ctx.api();
    try {
      const sessions = await api.list({
        project: str(ctx.values, "project") ?? "",
        pageSize: int(ctx.values, "page-size", 0),
      });
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

export const approveCommand: Command = {
  name: "approve",
  usage: "approve --session UID [--deny] [--reason TEXT] [--json]",
  options: { ...HOST_FLAGS, session: { type: "string" }, deny: { type: "boolean" }, reason: { type: "string" } },
  async run(ctx) {
    const session = requireStr(ctx.values, "session");
    const approved = ctx.values["deny"] !== true;
    const api = await ctx.api();
    try {
      const res = await api.approve({ session, approved, reason: str(ctx.values, "reason") ?? "" });
      decisionOut(ctx, res, approved ? "approved" : "denied");
      return 0;
    } finally {
      await api.close();
    }
  },
};

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
