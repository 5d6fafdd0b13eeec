// The built-in harnesses behave as the reference's (wire-contract §7): echo makes one model call with
// the last input; counter keeps RAM state and never reads history (I4); chat sends the conversation.
import { describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import {
  EventKind,
  EventSchema,
  type Event,
  type Message,
  type ToolCall,
  type ToolResult,
  type Usage,
} from "../../src/gen/agentsessions/v1/common_pb.js";
import { Resumability } from "../../src/gen/agentsessions/v1/harness_pb.js";
import { messageText, textMessage } from "../../src/model/text.js";
import type { EventSink, Harness, ModelRequest, ModelResponse, StartInfo } from "../../src/harness/types.js";
import { builtinHarnesses, ChatAgent, CounterAgent, EchoAgent } from "../../harnesses/index.js";
import chatFactory from "../../harnesses/chatagent/index.js";
import counterFactory from "../../harnesses/counteragent/index.js";
import echoFactory from "../../harnesses/echoagent/index.js";

type SinkCall =
  | { kind: "model"; request: ModelRequest }
  | { kind: "toolCall"; call: ToolCall }
  | { kind: "output"; text: string }
  | { kind: "report"; result: ToolResult }
  | { kind: "usage"; usage: Usage };

class RecordingSink implements EventSink {
  readonly calls: SinkCall[] = [];
  async model(request: ModelRequest): Promise<ModelResponse> {
    this.calls.push({ kind: "model", request });
    return { message: textMessage("assistant", `echo:${messageText(request.messages[request.messages.length - 1])}`) };
  }
  async toolCall(call: ToolCall): Promise<ToolResult> {
    this.calls.push({ kind: "toolCall", call });
    throw new Error("no tools in this test");
  }
  async output(text: string): Promise<void> {
    this.calls.push({ kind: "output", text });
  }
  async report(result: ToolResult): Promise<void> {
    this.calls.push({ kind: "report", result });
  }
  async usage(usage: Usage): Promise<void> {
    this.calls.push({ kind: "usage", usage });
  }
}

function start(inputs: string[], opts: { history?: Event[]; config?: string } = {}): StartInfo {
  return {
    sessionUid: "sess-000000000000000000000001",
    executionId: "0123456789abcdef",
    config: new TextEncoder().encode(opts.config ?? ""),
    history: opts.history ?? [],
    inputs: inputs.map((t) => textMessage("user", t)),
    resumeFromSeq: 0,
  };
}

function messageEvent(kind: EventKind, role: string, text: string): Event {
  return create(EventSchema, {
    executionId: "fedcba9876543210",
    kind,
    body: { case: "message", value: textMessage(role, text) },
  });
}

function modelRequests(sink: RecordingSink): ModelRequest[] {
  return sink.calls.flatMap((c) => (c.kind === "model" ? [c.request] : []));
}

function transcript(messages: readonly Message[]): string[] {
  return messages.map((m) => `${m.role}:${messageText(m)}`);
}

const signal = new AbortController().signal;

describe("echo harness", () => {
  it("describes itself as the reference does", async () => {
    const d = await new EchoAgent().describe();
    expect([d.id, d.version, d.models]).toEqual(["echo", "1", ["echo"]]);
    expect(d.capabilities?.resumability).toBe(Resumability.STATELESS_REPLAY);
    expect(d.capabilities?.forkSafe).toBe(true);
  });

  it("makes exactly one model call with the last input's text, ignoring history", async () => {
    const sink = new RecordingSink();
    const history = [messageEvent(EventKind.EVENT_INPUT, "user", "old")];
    await echoFactory().run(start(["first", "second"], { history }), sink, signal);
    expect(sink.calls).toHaveLength(1);
    const [request] = modelRequests(sink);
    expect(request?.model).toBe("echo");
    expect(transcript(request?.messages ?? [])).toEqual(["user:second"]);
  });

  it("sends an empty user message when there are no inputs", async () => {
    const sink = new RecordingSink();
    await new EchoAgent().run(start([]), sink, signal);
    expect(transcript(modelRequests(sink)[0]?.messages ?? [])).toEqual(["user:"]);
  });
});

describe("counter harness", () => {
  it("describes itself as memory-snapshot, not fork-safe, with no models", async () => {
    const d = await new CounterAgent().describe();
    expect([d.id, d.version, d.models]).toEqual(["counter", "1", []]);
    expect(d.capabilities?.resumability).toBe(Resumability.REQUIRES_MEMORY_SNAPSHOT);
    expect(d.capabilities?.forkSafe).toBe(false);
  });

  it("answers 1, 2, 3 across runs of one instance and ignores a 5-element history (I4)", async () => {
    const harness = counterFactory();
    const sink = new RecordingSink();
    const history = [1, 2, 3, 4, 5].map((n) => messageEvent(EventKind.EVENT_OUTPUT, "assistant", String(n * 10)));
    await harness.run(start(["a"], { history }), sink, signal);
    await harness.run(start(["b"]), sink, signal);
    await harness.run(start(["c"], { history }), sink, signal);
    expect(sink.calls).toEqual([
      { kind: "output", text: "1" },
      { kind: "output", text: "2" },
      { kind: "output", text: "3" },
    ]);
  });

  it("keeps separate counts per instance (one actor per session)", async () => {
    const a = counterFactory();
    const b = counterFactory();
    const sink = new RecordingSink();
    await a.run(start(["x"]), sink, signal);
    await a.run(start(["x"]), sink, signal);
    await b.run(start(["x"]), sink, signal);
    expect(sink.calls.map((c) => (c.kind === "output" ? c.text : "?"))).toEqual(["1", "2", "1"]);
  });
});

describe("chat harness", () => {
  it("describes itself with its model (default echo)", async () => {
    const d = await chatFactory().describe();
    expect([d.id, d.version, d.models]).toEqual(["chat", "2", ["echo"]]);
    expect(d.capabilities?.resumability).toBe(Resumability.STATELESS_REPLAY);
    expect(d.capabilities?.forkSafe).toBe(true);
    expect((await new ChatAgent({ model: "gpt-x" }).describe()).models).toEqual(["gpt-x"]);
  });

  it("sends INPUT and OUTPUT history in journal order, then all inputs, in one call", async () => {
    const history = [
      create(EventSchema, {
        kind: EventKind.EVENT_EXECUTION_START,
        body: { case: "executionStart", value: { inputCount: 1n } },
      }),
      messageEvent(EventKind.EVENT_INPUT, "user", "hi"),
      create(EventSchema, {
        kind: EventKind.EVENT_MODEL_CALL,
        body: { case: "model", value: { model: "echo", inputHash: "h" } },
      }),
      messageEvent(EventKind.EVENT_OUTPUT, "assistant", "echo:hi"),
      create(EventSchema, { kind: EventKind.EVENT_END, body: { case: "end", value: {} } }),
      messageEvent(EventKind.EVENT_INPUT, "user", "failed turn input"),
    ];
    const sink = new RecordingSink();
    await new ChatAgent({ model: "m" }).run(start(["next", "and more"], { history }), sink, signal);
    // One model call, then the kit's usage record of it.
    expect(sink.calls.map((c) => c.kind)).toEqual(["model", "usage"]);
    const [request] = modelRequests(sink);
    expect(request?.model).toBe("m");
    expect(transcript(request?.messages ?? [])).toEqual([
      "user:hi",
      "assistant:echo:hi",
      "user:failed turn input",
      "user:next",
      "user:and more",
    ]);
  });

  it("prepends the configured system prompt", async () => {
    const sink = new RecordingSink();
    const history = [messageEvent(EventKind.EVENT_INPUT, "user", "earlier")];
    await new ChatAgent().run(start(["now"], { history, config: '{"system_prompt":"be terse"}' }), sink, signal);
    expect(transcript(modelRequests(sink)[0]?.messages ?? [])).toEqual(["system:be terse", "user:earlier", "user:now"]);
  });

  it("fails the turn on a config that is not JSON, before calling the model", async () => {
    const sink = new RecordingSink();
    await expect(new ChatAgent().run(start(["x"], { config: "not json" }), sink, signal)).rejects.toThrow(
      /not valid JSON/,
    );
    await expect(new ChatAgent().run(start(["x"], { config: '{"system_prompt":7}' }), sink, signal)).rejects.toThrow(
      /invalid/,
    );
    expect(sink.calls).toEqual([]);
  });
});

describe("builtinHarnesses", () => {
  it("keys each factory by the id its harness describes", async () => {
    expect(Object.keys(builtinHarnesses).sort()).toEqual([
      "ask",
      "askcounter",
      "chat",
      "counter",
      "echo",
      "notes",
      "question",
    ]);
    for (const [id, factory] of Object.entries(builtinHarnesses)) {
      const harness: Harness = factory();
      expect((await harness.describe()).id).toBe(id);
    }
  });
});
