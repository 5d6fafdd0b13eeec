// Session commands: exec, replay, fork, get, list, suspend, resume. Invariant: with --json each prints
// exactly one JSON document on stdout; errors go to stderr with a non-zero exit.
import { toJson } from "@bufbuild/protobuf";
import { ComputeState, ExecState, SessionSchema, type Session } from "../../gen/agentsessions/v1/session_pb.js";
import { HOST_FLAGS, int, json, requireStr, str, UsageError, type Command } from "../command.js";

function sessionLine(s: Session): string {
  const state = (ComputeState[s.computeState] ?? "").replace("COMPUTE_", "");
  const exec = (ExecState[s.execState] ?? "").replace("EXEC_", "");
  const parent = s.parentUid ? ` parent=${s.parentUid}@${s.forkSeq}` : "";
  return `session ${s.metadata?.uid ?? ""} harness=${s.harness} last_seq=${s.lastSeq} compute=${state} exec=${exec}${parent}`;
}

function sessionJson(s: Session): unknown {
  return toJson(SessionSchema, s, { useProtoFieldName: true });
}

export const execCommand: Command = {
  name: "exec",
  summary: "run one turn (creates a session when --session is omitted)",
  usage: "exec [--session UID] [--harness NAME] --input TEXT [--input TEXT…] [--expected-last-seq N] [--json]",
  options: { ...HOST_FLAGS, session: { type: "string" }, harness: { type: "string" }, input: { type: "string", multiple: true }, "expected-last-seq": { type: "string" } },
  async run(ctx) {
    const inputs = (ctx.values["input"] as string[] | undefined) ?? [];
    if (inputs.length === 0) throw new UsageError("--input is required (repeat it for several inputs)");
    const session = str(ctx.values, "session");
    const harness = str(ctx.values, "harness");
    const expected = str(ctx.values, "expected-last-seq") !== undefined ? int(ctx.values, "expected-last-seq", 0) : undefined;
    const api = await ctx.api();
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
      if (json(ctx.values)) {
        ctx.out(JSON.stringify({ session: uid, output: res.output, last_seq: res.lastSeq }));
      } else {
        if (!session) ctx.err(`session ${uid}`);
        if (streamed) ctx.out("");
        else ctx.out(res.output);
      }
      return 0;
    } finally {
      await api.close();
    }
  },
};

export const replayCommand: Command = {
  name: "replay",
  summary: "re-execute a session's turns from its journal with zero model calls",
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
  summary: "branch a session at a seq (default: the head) into children",
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
  summary: "show a session",
  usage: "get --session UID [--json]",
  options: { ...HOST_FLAGS, session: { type: "string" } },
  async run(ctx) {
    const session = requireStr(ctx.values, "session");
    const api = await ctx.api();
    try {
      const s = await api.get(session);
      ctx.out(json(ctx.values) ? JSON.stringify(sessionJson(s)) : sessionLine(s));
      return 0;
    } finally {
      await api.close();
    }
  },
};

export const listCommand: Command = {
  name: "list",
  summary: "list sessions of a project, newest first",
  usage: "list [--project P] [--page-size N] [--json]",
  options: { ...HOST_FLAGS, "page-size": { type: "string" } },
  async run(ctx) {
    const api = await ctx.api();
    try {
      const sessions = await api.list({ project: str(ctx.values, "project") ?? "", pageSize: int(ctx.values, "page-size", 0) });
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
  summary: "snapshot a session's compute and free it",
  usage: "suspend --session UID [--json]",
  options: { ...HOST_FLAGS, session: { type: "string" } },
  async run(ctx) {
    const session = requireStr(ctx.values, "session");
    const api = await ctx.api();
    try {
      const res = await api.suspend(session);
      if (json(ctx.values)) ctx.out(JSON.stringify({ session: sessionJson(res.session), snapshot: res.snapshot }));
      else ctx.out(`${sessionLine(res.session)} snapshot memory=${res.snapshot.memory}${res.snapshot.digest ? ` digest=${res.snapshot.digest}` : ""}`);
      return 0;
    } finally {
      await api.close();
    }
  },
};

export const resumeCommand: Command = {
  name: "resume",
  summary: "restore a session's compute and re-drive an interrupted turn",
  usage: "resume --session UID [--json]",
  options: { ...HOST_FLAGS, session: { type: "string" } },
  async run(ctx) {
    const session = requireStr(ctx.values, "session");
    const api = await ctx.api();
    try {
      const s = await api.resume(session);
      ctx.out(json(ctx.values) ? JSON.stringify(sessionJson(s)) : sessionLine(s));
      return 0;
    } finally {
      await api.close();
    }
  },
};
