// Journaled compaction (docs/protocol.md §16): a kit agent past its threshold summarises the older
// history through a host-mediated model call; the host journals the compaction record (summary, the
// seq range replaced, the input hash); later turns' Start.history begins after the range, so history
// and model input stay bounded; replay is identical with zero model calls; the chain verifies.
import { describe, expect, it } from "vitest";
import { agent } from "../../src/agent/index.js";
import { compactionOfEvent } from "../../src/projection/compaction.js";
import { execTurn, replaySession, resumeTurn, SessionLog } from "../../src/controller/index.js";
import { ModelRequestError } from "../../src/model/types.js";
import { ErrorCode, isHostError } from "../../src/errors/index.js";
import type { Event } from "../../src/gen/agentsessions/v1/common_pb.js";
import { MemoryJournal } from "../../src/journal/memory/journal.js";
import { messageText, textMessage } from "../../src/model/text.js";
import type { EventSink, Harness, StartInfo } from "../../src/harness/types.js";
import { say, ScriptedModel } from "../../src/model/scripted.js";
import { created } from "../journal/sessions.js";

const S = "sess-0000000000000000000000c1";
const signal = () => new AbortController().signal;

/** Wraps a harness to record the size of every Start.history it receives. */
function watching(inner: Harness, sizes: number[]): Harness {
  return {
    describe: () => inner.describe(),
    run: (start: StartInfo, sink: EventSink, sig: AbortSignal) => {
      sizes.push(start.history.length);
      return inner.run(start, sink, sig);
    },
  };
}

function summariser() {
  return new ScriptedModel([], (req) => {
    const isSummary = req.messages[0]?.role === "system" && messageText(req.messages[0]).startsWith("Summarise");
    return say(
      isSummary ? `summary#${messageText(req.messages.at(-1)).length}` : `re:${messageText(req.messages.at(-1))}`,
    );
  });
}

describe("journaled compaction", () => {
  it("compactionBoundsHistoryAndModelInputAndReplaysWithZeroModelCalls", async () => {
    const journal = await created(new MemoryJournal(), S);
    const fence = await journal.newFence(S);
    const model = summariser();
    const sizes: number[] = [];
    const h = watching(agent({ id: "kit", model: "m", compact: { afterMessages: 6 } }), sizes);
    const binding = { harness: h, name: "kit", descriptor: h.describe() as never };
    const outputs: string[] = [];
    for (let i = 0; i < 30; i++) {
      const res = await execTurn(
        { journal, model },
        { session: S, binding, fence, inputs: [textMessage("user", `m${i}`)], signal: signal() },
      );
      outputs.push(...res.outputs);
    }
    expect(outputs).toEqual(Array.from({ length: 30 }, (_, i) => `re:m${i}`));
    const records = await journal.readRange(S);
    const compactions = records.flatMap((r) => {
      const c = compactionOfEvent(r.event);
      return c ? [{ seq: r.seq, c }] : [];
    });
    expect(compactions.length).toBeGreaterThanOrEqual(5);
    // Each record names the range it replaces, contiguous from 1, and the hash of its MODEL_CALL.
    let from = 1;
    for (const { seq, c } of compactions) {
      expect(Number(c.fromSeq)).toBe(from);
      expect(Number(c.throughSeq)).toBeLessThan(seq);
      from = Number(c.throughSeq) + 1;
      const call = records[seq - 2]!.event.body;
      expect(call.case === "model" && call.value.inputHash).toBe(c.inputHash);
      expect(c.summary).toMatch(/^summary#/);
    }
    // Bounded: no Start.history and no model request grows with the session.
    expect(Math.max(...sizes.slice(10))).toBeLessThanOrEqual(Math.max(...sizes.slice(0, 10)) + 8);
    const longest = Math.max(...model.requests.map((r) => r.messages.length));
    expect(longest).toBeLessThanOrEqual(8);
    expect(SessionLog.of(records).historyBase(records.length + 1)).toBe(from - 1);
    expect((await journal.verify(S)).ok).toBe(true);
    const calls = model.calls;
    const replay = await replaySession({ journal }, { session: S, binding, signal: signal() });
    expect(model.calls).toBe(calls);
    expect(replay.outputs).toEqual(outputs);
  });

  it("compactionOfMoreThanTheHistoryIsRefusedBeforeAnythingIsJournaled", async () => {
    const journal = await created(new MemoryJournal(), S);
    const fence = await journal.newFence(S);
    const model = new ScriptedModel();
    const h: Harness = {
      describe: () => agent({ id: "x", model: "m" }).describe(),
      run: async (_start, sink, sig) => {
        await sink.model(
          { model: "m", messages: [textMessage("user", "s")], params: { "harnesshost.compact": "1" } },
          sig,
        );
      },
    };
    const binding = { harness: h, name: "x", descriptor: h.describe() as never };
    let err: unknown;
    try {
      await execTurn(
        { journal, model },
        { session: S, binding, fence, inputs: [textMessage("user", "a")], signal: signal() },
      );
    } catch (e) {
      err = e;
    }
    expect(isHostError(err, ErrorCode.InvalidArgument)).toBe(true);
    expect(model.calls).toBe(0);
    const kinds = (await journal.readRange(S)).map((r: { event: Event }) => r.event.kind);
    expect(kinds).not.toContain(2); // no MODEL_CALL
  });

  it("aCutDuringTheCompactionCallIsReDrivenOnceAndJournalsOneRecord", async () => {
    const journal = await created(new MemoryJournal(), S);
    const fence = await journal.newFence(S);
    const model = summariser();
    const h = agent({ id: "kit", model: "m", compact: { afterMessages: 4 } });
    const binding = { harness: h, name: "kit", descriptor: h.describe() as never };
    const run = (text: string) =>
      execTurn(
        { journal, model },
        { session: S, binding, fence, inputs: [textMessage("user", text)], signal: signal() },
      );
    await run("a");
    await run("b");
    // The third turn compacts first; its summarising call fails after MODEL_CALL is durable (a defect:
    // one attempt), so the turn is cut with the compaction's MODEL_CALL trailing.
    const inner = model.invoke.bind(model);
    let cut = true;
    // Host params never reach the provider: the summarising request is known by its instruction.
    const summarising = (req: { messages: readonly Parameters<typeof messageText>[0][] }) =>
      messageText(req.messages[0]).startsWith("Summarise");
    model.invoke = async (req, opts) => {
      if (cut && summarising(req)) {
        cut = false;
        model.requests.push(req);
        throw new ModelRequestError("provider refused");
      }
      return inner(req, opts);
    };
    let err: unknown;
    try {
      await run("c");
    } catch (e) {
      err = e;
    }
    expect(err).toBeDefined();
    const cutAt = (await journal.readRange(S)).at(-2)!.event;
    expect(cutAt.body.case === "model" && cutAt.body.value.params["harnesshost.compact"]).toBeTruthy();
    const calls = model.calls;
    const resumed = await resumeTurn({ journal, model }, { session: S, binding, fence, signal: signal() });
    // The cut call once more, then the turn's own call.
    expect(model.calls - calls).toBe(2);
    expect(resumed?.outputs).toEqual(["re:c"]);
    const records = await journal.readRange(S);
    expect(records.filter((r) => compactionOfEvent(r.event) !== undefined)).toHaveLength(1);
    const replay = await replaySession({ journal }, { session: S, binding, signal: signal() });
    expect(replay.outputs).toEqual(["re:a", "re:b", "re:c"]);
    expect((await journal.verify(S)).ok).toBe(true);
  });
});
