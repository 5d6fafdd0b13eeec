// Controller invariants (docs/protocol.md §5.4, §6). Each invariant has a test named after it.
import { describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import {
  EventKind,
  IdentityRefSchema,
  Mediation,
  MessageSchema,
  ToolCallSchema,
  ToolResultSchema,
} from "../../src/gen/agentsessions/v1/common_pb.js";
import { execTurn, replaySession, resumeTurn, ModelCallCounter } from "../../src/controller/index.js";
import type { ToolExecutor } from "../../src/controller/index.js";
import { ErrorCode, HostError } from "../../src/errors/index.js";
import { MemoryJournal } from "../../src/journal/memory/journal.js";
import { bind, CountingModel, echoRun, harnessOf, user } from "./helpers.js";
import { created } from "../journal/sessions.js";

const signal = () => new AbortController().signal;
const S = "sess-000000000000000000000001";

async function setup() {
  const journal = await created(new MemoryJournal(), S);
  const model = new CountingModel();
  const fence = await journal.newFence(S);
  return { journal, model, fence, deps: { journal, model } };
}

function kinds(recs: readonly { event: { kind: EventKind } }[]): string[] {
  return recs.map((r) => EventKind[r.event.kind]);
}

/** The events of each commit the journal makes from now on, in order. */
function watchCommits(journal: MemoryJournal): string[][] {
  const commits: string[][] = [];
  const batch = journal.appendBatch.bind(journal);
  const append = journal.append.bind(journal);
  journal.appendBatch = async (s, at, f, events) => {
    commits.push(kinds(events.map((event) => ({ event }))));
    return batch(s, at, f, events);
  };
  journal.append = async (s, at, f, event) => {
    commits.push(kinds([{ event }]));
    return append(s, at, f, event);
  };
  return commits;
}

describe("controller: one turn", () => {
  it("appends EXECUTION_START, INPUT, MODEL_CALL, OUTPUT, END and the chain verifies", async () => {
    const { journal, deps, fence } = await setup();
    const res = await execTurn(deps, {
      session: S,
      binding: bind(harnessOf(echoRun), "echo"),
      fence,
      inputs: [user("hi")],
      signal: signal(),
    });
    expect(res.outputs).toEqual(["echo:hi"]);
    const recs = await journal.readRange(S);
    expect(kinds(recs)).toEqual([
      "EVENT_EXECUTION_START",
      "EVENT_INPUT",
      "EVENT_MODEL_CALL",
      "EVENT_OUTPUT",
      "EVENT_END",
    ]);
    const start = recs[0]!.event.body;
    expect(start.case === "executionStart" && start.value.inputCount).toBe(1n);
    expect(start.case === "executionStart" && start.value.harness).toBe("echo");
    expect(recs.every((r) => r.event.executionId === res.executionId && r.event.ts !== undefined)).toBe(true);
    const call = recs[2]!.event.body;
    expect(call.case === "model" && call.value.inputHash).toMatch(/^[0-9a-f]{64}$/);
    expect(call.case === "model" && call.value.messages).toEqual([]);
    expect((await journal.verify(S)).ok).toBe(true);
  });

  // docs/protocol.md §5.4 (commit grouping)
  it("an echo turn makes two durable commits and streams nothing before it is committed", async () => {
    const { journal, deps, fence } = await setup();
    const commits: string[][] = [];
    let durableSeq = 0;
    const batch = journal.appendBatch.bind(journal);
    const append = journal.append.bind(journal);
    journal.appendBatch = async (s, at, f, events) => {
      commits.push(kinds(events.map((event) => ({ event }))));
      const recs = await batch(s, at, f, events);
      durableSeq = recs.at(-1)?.seq ?? durableSeq;
      return recs;
    };
    journal.append = async (s, at, f, event) => {
      commits.push(kinds([{ event }]));
      const rec = await append(s, at, f, event);
      durableSeq = rec.seq;
      return rec;
    };
    const seen: number[] = [];
    const observer = {
      onRecord: (rec: { seq: number }) => {
        expect(rec.seq).toBeLessThanOrEqual(durableSeq);
        seen.push(rec.seq);
      },
    };
    const res = await execTurn(
      { ...deps, observer },
      { session: S, binding: bind(harnessOf(echoRun), "echo"), fence, inputs: [user("hi")], signal: signal() },
    );
    expect(res.outputs).toEqual(["echo:hi"]);
    expect(commits).toEqual([
      ["EVENT_EXECUTION_START", "EVENT_INPUT", "EVENT_MODEL_CALL"],
      ["EVENT_OUTPUT", "EVENT_END"],
    ]);
    expect(seen).toEqual([1, 2, 3, 4, 5]);
  });

  // docs/protocol.md §5.4 (commit grouping)
  it("a harness-reported tool result rides the turn's next commit and is durable before the next model call", async () => {
    const { journal, deps, fence } = await setup();
    const commits = watchCommits(journal);
    const atSecondCall: string[] = [];
    const model = new CountingModel();
    const invoke = model.invoke.bind(model);
    model.invoke = async (req, opts) => {
      if (model.calls === 1) atSecondCall.push(...kinds(await journal.readRange(S)));
      return invoke(req, opts);
    };
    const h = harnessOf(async (_start, sink) => {
      await sink.model({ model: "m", messages: [user("q")] });
      await sink.report(create(ToolResultSchema, { id: "1.0:c1", output: { tempC: 12 } }));
      await sink.model({ model: "m", messages: [user("q"), user("r")] });
    });
    await execTurn({ ...deps, model }, { session: S, binding: bind(h), fence, inputs: [user("q")], signal: signal() });
    expect(commits).toEqual([
      ["EVENT_EXECUTION_START", "EVENT_INPUT", "EVENT_MODEL_CALL"],
      ["EVENT_OUTPUT", "EVENT_TOOL_RESULT", "EVENT_MODEL_CALL"],
      ["EVENT_OUTPUT", "EVENT_END"],
    ]);
    expect(atSecondCall.slice(-3)).toEqual(["EVENT_OUTPUT", "EVENT_TOOL_RESULT", "EVENT_MODEL_CALL"]);
    expect((await journal.verify(S)).ok).toBe(true);
  });

  it("a harness-reported tool result is committed with the turn's ERROR when the harness then fails", async () => {
    const { journal, deps, fence } = await setup();
    const commits = watchCommits(journal);
    const h = harnessOf(async (_start, sink) => {
      await sink.model({ model: "m", messages: [user("q")] });
      await sink.report(create(ToolResultSchema, { id: "1.0:c1", output: { tempC: 12 } }));
      throw new Error("boom after the tool");
    });
    await expect(
      execTurn(deps, { session: S, binding: bind(h), fence, inputs: [user("q")], signal: signal() }),
    ).rejects.toMatchObject({ code: ErrorCode.Internal });
    expect(commits.at(-1)).toEqual(["EVENT_OUTPUT", "EVENT_TOOL_RESULT", "EVENT_ERROR"]);
  });

  // docs/protocol.md §5.4 (deltas)
  it("a model call's deltas arrive in order and its last chunk carries done", async () => {
    const { deps, fence } = await setup();
    const chunked = {
      name: "chunked",
      async invoke(_req: unknown, opts: { onDelta?: (c: string) => void }) {
        for (const c of ["a", "b", "c"]) opts.onDelta?.(c);
        return {
          message: create(MessageSchema, {
            role: "assistant",
            parts: [{ part: { case: "text", value: { text: "abc" } } }],
          }),
        };
      },
    };
    const deltas: [string, boolean][] = [];
    const observer = { onDelta: (_id: string, chunk: string, done: boolean) => void deltas.push([chunk, done]) };
    await execTurn(
      { ...deps, model: chunked, observer },
      { session: S, binding: bind(harnessOf(echoRun)), fence, inputs: [user("q")], signal: signal() },
    );
    expect(deltas).toEqual([
      ["a", false],
      ["b", false],
      ["c", true],
    ]);
  });

  it("a harness that fails before its first sink call commits EXECUTION_START, INPUT and ERROR together", async () => {
    const { journal, deps, fence } = await setup();
    let commits = 0;
    const batch = journal.appendBatch.bind(journal);
    journal.appendBatch = async (s, at, f, events) => {
      commits++;
      return batch(s, at, f, events);
    };
    const h = harnessOf(async () => {
      throw new Error("boom before anything");
    });
    await expect(
      execTurn(deps, { session: S, binding: bind(h), fence, inputs: [user("x")], signal: signal() }),
    ).rejects.toMatchObject({ code: ErrorCode.Internal });
    expect(commits).toBe(1);
    expect(kinds(await journal.readRange(S))).toEqual(["EVENT_EXECUTION_START", "EVENT_INPUT", "EVENT_ERROR"]);
    expect((await journal.verify(S)).ok).toBe(true);
  });

  it("refuses a stale expected_last_seq with Conflict and writes nothing", async () => {
    const { journal, deps, fence } = await setup();
    await expect(
      execTurn(deps, {
        session: S,
        binding: bind(harnessOf(echoRun)),
        fence,
        inputs: [user("a")],
        expectedLastSeq: 3,
        signal: signal(),
      }),
    ).rejects.toMatchObject({ code: ErrorCode.Conflict });
    expect((await journal.head(S)).seq).toBe(0);
  });

  it("refuses a superseded fence with Fenced and writes nothing", async () => {
    const { journal, deps, fence } = await setup();
    await journal.newFence(S);
    await expect(
      execTurn(deps, { session: S, binding: bind(harnessOf(echoRun)), fence, inputs: [user("a")], signal: signal() }),
    ).rejects.toMatchObject({ code: ErrorCode.Fenced });
    expect((await journal.head(S)).seq).toBe(0);
  });

  it("a harness failure journals ERROR (not END) and leaves the turn resumable", async () => {
    const { journal, deps, fence } = await setup();
    let fail = true;
    const h = harnessOf(async (start, sink) => {
      await echoRun(start, sink);
      if (fail) throw new Error("boom");
    });
    await expect(
      execTurn(deps, { session: S, binding: bind(h), fence, inputs: [user("x")], signal: signal() }),
    ).rejects.toMatchObject({ code: ErrorCode.Internal });
    expect(kinds(await journal.readRange(S)).at(-1)).toBe("EVENT_ERROR");
    fail = false;
    const resumed = await resumeTurn(deps, { session: S, binding: bind(h), fence, signal: signal() });
    expect(resumed?.outputs).toEqual(["echo:x"]);
    expect(kinds(await journal.readRange(S)).at(-1)).toBe("EVENT_END");
    expect((await journal.verify(S)).ok).toBe(true);
  });

  it("divergence is sticky: a harness that swallows a sink error still fails the turn", async () => {
    const { deps, fence } = await setup();
    const h = harnessOf(async (_s, sink) => {
      await sink
        .toolCall(create(ToolCallSchema, { id: "t1", tool: "x", mediation: Mediation.CONTROLLER_MEDIATED }))
        .catch(() => undefined);
      await sink.output("after");
    });
    await expect(
      execTurn(deps, { session: S, binding: bind(h), fence, inputs: [], signal: signal() }),
    ).rejects.toMatchObject({ code: ErrorCode.InvalidArgument });
  });
});

describe("controller: start info", () => {
  it("hands the session's recorded principal to the harness as Start.identity", async () => {
    const { deps, fence } = await setup();
    const seen: (string | undefined)[] = [];
    const h = harnessOf(async (start, sink) => {
      seen.push(start.identity?.principal?.principal);
      await echoRun(start, sink);
    });
    const identity = create(IdentityRefSchema, { principal: "user://ada", issuer: "test" });
    await execTurn(deps, { session: S, binding: bind(h), fence, inputs: [user("hi")], identity, signal: signal() });
    await execTurn(deps, { session: S, binding: bind(h), fence, inputs: [user("again")], signal: signal() });
    expect(seen).toEqual(["user://ada", undefined]);
  });
});

describe("controller invariants", () => {
  it("I0 replay recomputes the model-input hash and refuses a mismatch", async () => {
    const { journal, deps, fence } = await setup();
    await execTurn(deps, {
      session: S,
      binding: bind(harnessOf(echoRun)),
      fence,
      inputs: [user("a")],
      signal: signal(),
    });
    const liar = harnessOf(async (_s, sink) => {
      await sink.model({
        model: "echo",
        messages: [
          create(MessageSchema, { role: "user", parts: [{ part: { case: "text", value: { text: "different" } } }] }),
        ],
      });
    });
    await expect(replaySession({ journal }, { session: S, binding: bind(liar), signal: signal() })).rejects.toThrow(
      /seq 3.*I0/,
    );
  });

  it("I1 replay never invokes the model", async () => {
    const { journal, model, deps, fence } = await setup();
    for (const t of ["a", "b", "c"])
      await execTurn(deps, {
        session: S,
        binding: bind(harnessOf(echoRun)),
        fence,
        inputs: [user(t)],
        signal: signal(),
      });
    const before = model.calls;
    const replay = await replaySession(
      { journal },
      { session: S, binding: bind(harnessOf(echoRun)), signal: signal() },
    );
    expect(replay.outputs).toEqual(["echo:a", "echo:b", "echo:c"]);
    expect(model.calls).toBe(before);
  });

  it("I2 opaque reasoning parts are recorded and replayed verbatim", async () => {
    const { journal, model, deps, fence } = await setup();
    const opaque = new Uint8Array([0, 255, 1, 2, 3, 128]);
    model.reply = () =>
      create(MessageSchema, {
        role: "assistant",
        parts: [
          {
            part: {
              case: "reasoning",
              value: {
                provider: "anthropic",
                modelId: "m",
                opaque: { case: "opaqueBytes", value: opaque },
                ordinal: 1,
              },
            },
          },
          { part: { case: "text", value: { text: "done" } } },
        ],
      });
    const seen: Uint8Array[] = [];
    const h = harnessOf(async (start, sink) => {
      const r = await sink.model({ model: "m", messages: [...start.inputs] });
      const p = r.message.parts[0]?.part;
      if (p?.case === "reasoning" && p.value.opaque.case === "opaqueBytes") seen.push(p.value.opaque.value);
    });
    await execTurn(deps, { session: S, binding: bind(h), fence, inputs: [user("q")], signal: signal() });
    await replaySession({ journal }, { session: S, binding: bind(h), signal: signal() });
    expect(seen).toHaveLength(2);
    expect(Buffer.from(seen[0]!).equals(Buffer.from(opaque))).toBe(true);
    expect(Buffer.from(seen[1]!).equals(Buffer.from(opaque))).toBe(true);
  });

  it("I3 mediated tool calls are write-ahead and re-driven at most once after a cut", async () => {
    const { journal, deps, fence } = await setup();
    const executed: string[] = [];
    const ac = new AbortController();
    let crash = true;
    const tools: ToolExecutor = {
      async execute(call) {
        const recs = await journal.readRange(S);
        const intents = recs.filter(
          (r) => r.event.body.case === "tool" && r.event.body.value.idempotencyKey === call.idempotencyKey,
        );
        executed.push(intents.length === 1 ? call.idempotencyKey : "no-durable-intent"); // the intent is durable first
        if (crash) {
          // The host dies mid-effect: the caller's context ends before a receipt exists.
          crash = false;
          ac.abort();
          throw new Error("connection to executor lost");
        }
        return { output: { ok: true } };
      },
    };
    const h = harnessOf(async (_s, sink) => {
      const r = await sink.toolCall(
        create(ToolCallSchema, {
          id: "c1",
          tool: "write",
          mediation: Mediation.CONTROLLER_MEDIATED,
          idempotencyKey: "k1",
          args: { path: "/x" },
        }),
      );
      await sink.output(r.isError ? "error" : "ok");
    });
    const cut = execTurn(
      { ...deps, tools },
      { session: S, binding: bind(h), fence, inputs: [user("go")], signal: ac.signal },
    );
    await expect(cut).rejects.toBeInstanceOf(HostError);
    const afterCut = await journal.readRange(S);
    expect(afterCut.filter((r) => r.event.kind === EventKind.EVENT_TOOL_RESULT)).toHaveLength(0);
    const f2 = await journal.newFence(S);
    const res = await resumeTurn({ ...deps, tools }, { session: S, binding: bind(h), fence: f2, signal: signal() });
    expect(res?.outputs).toEqual(["ok"]);
    expect(executed).toEqual(["k1", "k1"]);
    expect(
      await resumeTurn({ ...deps, tools }, { session: S, binding: bind(h), fence: f2, signal: signal() }),
    ).toBeUndefined();
    expect(executed).toHaveLength(2);
  });

  it("I3 a keyless or unmediated tool call is refused before anything is recorded", async () => {
    const { journal, deps, fence } = await setup();
    const tools: ToolExecutor = { execute: async () => ({}) };
    const h = harnessOf(async (_s, sink) => {
      await sink.toolCall(
        create(ToolCallSchema, { id: "c1", tool: "write", mediation: Mediation.CONTROLLER_MEDIATED }),
      );
    });
    await expect(
      execTurn({ ...deps, tools }, { session: S, binding: bind(h), fence, inputs: [], signal: signal() }),
    ).rejects.toThrow(/idempotency key/);
    expect(kinds(await journal.readRange(S)).includes("EVENT_TOOL_CALL")).toBe(false);
  });

  it("I5 replay is byte-identical and read-only", async () => {
    const { journal, deps, fence } = await setup();
    const live: string[] = [];
    for (const t of ["one", "two"])
      live.push(
        ...(
          await execTurn(deps, {
            session: S,
            binding: bind(harnessOf(echoRun)),
            fence,
            inputs: [user(t)],
            signal: signal(),
          })
        ).outputs,
      );
    const before = (await journal.readRange(S)).map((r) => r.contentHash);
    const replay = await replaySession(
      { journal },
      { session: S, binding: bind(harnessOf(echoRun)), signal: signal() },
    );
    expect(replay.outputs).toEqual(live);
    expect((await journal.readRange(S)).map((r) => r.contentHash)).toEqual(before);
  });

  it("recovery: a turn cut after MODEL_CALL is re-driven with exactly one extra model call", async () => {
    const { journal, model, deps, fence } = await setup();
    model.failNext = 1;
    await expect(
      execTurn(deps, { session: S, binding: bind(harnessOf(echoRun)), fence, inputs: [user("z")], signal: signal() }),
    ).rejects.toBeInstanceOf(HostError);
    expect(kinds(await journal.readRange(S))).toEqual([
      "EVENT_EXECUTION_START",
      "EVENT_INPUT",
      "EVENT_MODEL_CALL",
      "EVENT_ERROR",
    ]);
    const calls = model.calls;
    const res = await resumeTurn(deps, { session: S, binding: bind(harnessOf(echoRun)), fence, signal: signal() });
    expect(res?.outputs).toEqual(["echo:z"]);
    expect(model.calls).toBe(calls + 1);
    const recs = await journal.readRange(S);
    expect(recs.filter((r) => r.event.kind === EventKind.EVENT_MODEL_CALL)).toHaveLength(1);
    expect(kinds(recs).at(-1)).toBe("EVENT_END");
  });

  it("resume serves recorded effects before going live", async () => {
    const { journal, model, deps, fence } = await setup();
    let stop = true;
    const h = harnessOf(async (start, sink) => {
      await echoRun(start, sink);
      await sink.output("middle");
      if (stop) throw new Error("cut");
      await echoRun(start, sink);
    });
    await expect(
      execTurn(deps, { session: S, binding: bind(h), fence, inputs: [user("q")], signal: signal() }),
    ).rejects.toBeInstanceOf(HostError);
    stop = false;
    const calls = model.calls;
    const res = await resumeTurn(deps, { session: S, binding: bind(h), fence, signal: signal() });
    expect(res?.outputs).toEqual(["echo:q", "middle", "echo:q"]);
    expect(model.calls).toBe(calls + 1);
    expect((await journal.verify(S)).ok).toBe(true);
  });

  it("replay counts zero provider calls with a ModelCallCounter", async () => {
    const { journal, model, fence } = await setup();
    const counter = new ModelCallCounter();
    await execTurn(
      { journal, model, modelCalls: counter },
      { session: S, binding: bind(harnessOf(echoRun)), fence, inputs: [user("a")], signal: signal() },
    );
    expect(counter.count).toBe(1);
    await replaySession({ journal }, { session: S, binding: bind(harnessOf(echoRun)), signal: signal() });
    expect(counter.count).toBe(1);
  });
});
