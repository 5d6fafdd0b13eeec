// The OpenAI-compatible provider against a local fake endpoint (docs/protocol.md §14.2, §14.3): request mapping, streamed
// deltas, assembled message/tool calls/usage, and the retry taxonomy (expected retried; defects and
// interrupts not).
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import {
  MessageSchema,
  ToolChoice_Mode,
  ToolChoiceSchema,
  ToolDefinitionSchema,
  type Message,
} from "../../src/gen/agentsessions/v1/common_pb.js";
import {
  chatCompletionBody,
  DEFAULT_MODEL_URL,
  echoModel,
  messageText,
  modelFromFlag,
  ModelInterruptedError,
  ModelRequestError,
  ModelUnavailableError,
  openAICompatible,
  textMessage,
  type ModelFlagOptions,
  type OpenAICompatibleOptions,
  type Sleep,
} from "../../src/model/index.js";
import { ErrorCode, HostError } from "../../src/errors/index.js";
import type { ModelRequest } from "../../src/harness/types.js";
import { FakeEndpoint, finishChunk, json, silence, sse, textChunk } from "./fake-endpoint.js";

let endpoint: FakeEndpoint;
let delays: number[];
const recordingSleep: Sleep = async (ms) => void delays.push(ms);

beforeEach(async () => {
  delays = [];
  endpoint = await new FakeEndpoint().start();
});
afterEach(async () => {
  await endpoint.close();
});

function provider(extra: Partial<OpenAICompatibleOptions> = {}) {
  return openAICompatible({
    baseUrl: endpoint.baseUrl,
    apiKey: "sk-secret-test",
    retry: { sleep: recordingSleep, random: () => 0 },
    ...extra,
  });
}

const hello: ModelRequest = { model: "from-request", messages: [textMessage("user", "hi")] };

const usageChunk = {
  id: "c1",
  object: "chat.completion.chunk",
  model: "gpt-test-0001",
  choices: [],
  usage: {
    prompt_tokens: 12,
    completion_tokens: 3,
    total_tokens: 15,
    completion_tokens_details: { reasoning_tokens: 1 },
  },
};

describe("openAICompatible: request mapping", () => {
  it("maps messages, tools, tool_choice, params, model and the auth header", async () => {
    endpoint.reply(sse([textChunk("ok"), finishChunk("stop")]));
    const messages: Message[] = [
      textMessage("system", "be brief"),
      textMessage("user", "weather in Paris?"),
      create(MessageSchema, {
        role: "assistant",
        parts: [
          { part: { case: "text", value: { text: "checking" } } },
          { part: { case: "toolCall", value: { id: "call_1", tool: "get_weather", args: { city: "Paris" } } } },
        ],
      }),
      create(MessageSchema, {
        role: "tool",
        parts: [
          {
            part: {
              case: "toolResult",
              value: { id: "call_1", content: [{ part: { case: "text", value: { text: "sunny" } } }] },
            },
          },
        ],
      }),
    ];
    await provider({ model: "gpt-test" }).invoke(
      {
        model: "from-request",
        messages,
        params: { temperature: "0.5", max_tokens: "64", user: "u-1" },
        tools: [
          create(ToolDefinitionSchema, {
            name: "get_weather",
            description: "Weather",
            inputSchema: { type: "object" },
          }),
        ],
        toolChoice: create(ToolChoiceSchema, { mode: ToolChoice_Mode.REQUIRED, name: "get_weather" }),
      },
      {},
    );
    expect(endpoint.requests).toHaveLength(1);
    const req = endpoint.requests[0]!;
    expect(req.method).toBe("POST");
    expect(req.url).toBe("/v1/chat/completions");
    expect(req.headers["authorization"]).toBe("Bearer sk-secret-test");
    expect(req.body).toEqual({
      model: "gpt-test",
      temperature: 0.5,
      max_tokens: 64,
      user: "u-1",
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: "system", content: "be brief" },
        { role: "user", content: "weather in Paris?" },
        {
          role: "assistant",
          content: "checking",
          tool_calls: [
            { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
          ],
        },
        { role: "tool", tool_call_id: "call_1", content: "sunny" },
      ],
      tools: [
        { type: "function", function: { name: "get_weather", description: "Weather", parameters: { type: "object" } } },
      ],
      tool_choice: { type: "function", function: { name: "get_weather" } },
    });
  });

  it("sends the request's model when the provider has none", async () => {
    endpoint.reply(sse([textChunk("ok"), finishChunk("stop")]));
    await provider().invoke(hello, {});
    expect(endpoint.requests[0]?.body["model"]).toBe("from-request");
  });

  it("refuses requests it cannot express, before sending anything", () => {
    const bad = (req: Partial<ModelRequest>) => () => chatCompletionBody({ ...hello, ...req }, "m", true);
    expect(bad({ params: { stream: "false" } })).toThrow(ModelRequestError);
    expect(bad({ params: { temperature: "warm" } })).toThrow(ModelRequestError);
    expect(bad({ messages: [textMessage("narrator", "x")] })).toThrow(ModelRequestError);
    expect(() => chatCompletionBody(hello, "", true)).toThrow(ModelRequestError);
  });
});

describe("openAICompatible: streaming", () => {
  it("delivers deltas in order and assembles the message and usage", async () => {
    endpoint.reply(sse([textChunk("Hel"), textChunk("lo"), textChunk(", world"), finishChunk("stop"), usageChunk]));
    const deltas: string[] = [];
    const res = await provider().invoke(hello, { onDelta: (d) => deltas.push(d) });
    expect(deltas).toEqual(["Hel", "lo", ", world"]);
    expect(res.message.role).toBe("assistant");
    expect(res.message.parts).toHaveLength(1);
    expect(messageText(res.message)).toBe("Hello, world");
    expect(res.usage?.model).toBe("gpt-test-0001");
    expect(res.usage?.inputTokens).toBe(12n);
    expect(res.usage?.outputTokens).toBe(3n);
    expect(res.usage?.reasoningTokens).toBe(1n);
  });

  it("assembles tool calls from streamed fragments", async () => {
    const toolChunk = (fragments: unknown[]) => ({
      id: "c1",
      model: "gpt-test",
      choices: [{ index: 0, delta: { tool_calls: fragments } }],
    });
    endpoint.reply(
      sse([
        toolChunk([{ index: 0, id: "call_a", type: "function", function: { name: "get_weather", arguments: "" } }]),
        toolChunk([{ index: 0, function: { arguments: '{"city":' } }]),
        toolChunk([{ index: 1, id: "call_b", type: "function", function: { name: "now", arguments: "{}" } }]),
        toolChunk([{ index: 0, function: { arguments: '"Paris"}' } }]),
        finishChunk("tool_calls"),
      ]),
    );
    const deltas: string[] = [];
    const res = await provider().invoke(hello, { onDelta: (d) => deltas.push(d) });
    expect(deltas).toEqual([]);
    const calls = res.message.parts.map((p) => (p.part.case === "toolCall" ? p.part.value : undefined));
    expect(calls.map((c) => [c?.id, c?.tool, c?.args])).toEqual([
      ["call_a", "get_weather", { city: "Paris" }],
      ["call_b", "now", {}],
    ]);
    expect(res.usage).toBeUndefined();
  });

  it("treats malformed tool-call arguments as a defect (one request)", async () => {
    endpoint.reply(
      sse([
        {
          choices: [
            {
              index: 0,
              delta: { tool_calls: [{ index: 0, id: "x", function: { name: "f", arguments: "{not json" } }] },
            },
          ],
        },
        finishChunk("tool_calls"),
      ]),
    );
    await expect(provider().invoke(hello, {})).rejects.toBeInstanceOf(ModelRequestError);
    expect(endpoint.requests).toHaveLength(1);
  });
});

describe("openAICompatible: non-streaming", () => {
  it("parses a whole completion, with a custom path and auth header", async () => {
    endpoint.reply(
      json(200, {
        id: "x",
        model: "gpt-test",
        choices: [{ index: 0, message: { role: "assistant", content: "whole answer" }, finish_reason: "stop" }],
        usage: { prompt_tokens: 5, completion_tokens: 2 },
      }),
    );
    const deltas: string[] = [];
    const res = await provider({ stream: false, path: "/deployments/d1/chat", authHeader: "api-key" }).invoke(hello, {
      onDelta: (d) => deltas.push(d),
    });
    const req = endpoint.requests[0]!;
    expect(req.url).toBe("/v1/deployments/d1/chat");
    expect(req.headers["api-key"]).toBe("sk-secret-test");
    expect(req.headers["authorization"]).toBeUndefined();
    expect(req.body["stream"]).toBe(false);
    expect(req.body["stream_options"]).toBeUndefined();
    expect(messageText(res.message)).toBe("whole answer");
    expect(deltas).toEqual(["whole answer"]);
    expect(res.usage?.inputTokens).toBe(5n);
    expect(res.usage?.reasoningTokens).toBe(0n);
  });

  it("treats a malformed 200 body as a defect (one request)", async () => {
    endpoint.reply(json(200, { choices: "nope" }));
    await expect(provider({ stream: false }).invoke(hello, {})).rejects.toBeInstanceOf(ModelRequestError);
    expect(endpoint.requests).toHaveLength(1);
  });
});

describe("openAICompatible: failures and retries", () => {
  it("retries a 429 once, waiting what Retry-After asks", async () => {
    endpoint.reply(
      json(429, { error: { message: "slow down", type: "rate_limit" } }, { "retry-after": "2" }),
      sse([textChunk("fine"), finishChunk("stop")]),
    );
    const res = await provider().invoke(hello, {});
    expect(messageText(res.message)).toBe("fine");
    expect(endpoint.requests).toHaveLength(2);
    expect(delays).toEqual([2000]);
  });

  it("gives up after maxAttempts 500s with ModelUnavailableError", async () => {
    endpoint.reply(json(500, {}), json(502, {}), json(503, {}), sse([textChunk("too late")]));
    const err = await provider({ retry: { maxAttempts: 3, sleep: recordingSleep } })
      .invoke(hello, {})
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelUnavailableError);
    expect((err as ModelUnavailableError).status).toBe(503);
    expect(endpoint.requests).toHaveLength(3);
    expect(delays).toHaveLength(2);
  });

  it("does not retry a 400 (a defect), and keeps the key and content out of the error", async () => {
    endpoint.reply(
      json(400, { error: { message: "unknown parameter", type: "invalid_request_error" } }),
      sse([textChunk("never")]),
    );
    const err = await provider()
      .invoke(hello, {})
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelRequestError);
    expect((err as ModelRequestError).status).toBe(400);
    expect((err as Error).message).toContain("invalid_request_error");
    expect((err as Error).message).not.toContain("sk-secret-test");
    expect(endpoint.requests).toHaveLength(1);
    expect(delays).toEqual([]);
  });

  it("an abort mid-stream is an interrupt and is not retried", async () => {
    endpoint.reply(sse([textChunk("first")], { hang: true }), sse([textChunk("never")]));
    const controller = new AbortController();
    const deltas: string[] = [];
    const err = await provider()
      .invoke(hello, {
        signal: controller.signal,
        onDelta: (d) => {
          deltas.push(d);
          controller.abort();
        },
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelInterruptedError);
    expect(deltas).toEqual(["first"]);
    expect(endpoint.requests).toHaveLength(1);
  });

  it("a stream cut before [DONE] is expected and retried", async () => {
    endpoint.reply(sse([textChunk("par")], { cut: true }), sse([textChunk("whole"), finishChunk("stop")]));
    const retried: unknown[] = [];
    const res = await provider({ onRetry: (info) => retried.push(info.error) }).invoke(hello, {});
    expect(retried).toHaveLength(1);
    expect(retried[0]).toBeInstanceOf(ModelUnavailableError);
    expect(messageText(res.message)).toBe("whole");
    expect(endpoint.requests).toHaveLength(2);
  });

  it("an attempt that times out is expected and retried", async () => {
    endpoint.reply(silence, sse([textChunk("second"), finishChunk("stop")]));
    const retried: unknown[] = [];
    const res = await provider({ timeoutMs: 1000, onRetry: (info) => retried.push(info.error) }).invoke(hello, {});
    expect((retried[0] as Error).message).toMatch(/timed out/);
    expect(messageText(res.message)).toBe("second");
    expect(endpoint.requests).toHaveLength(2);
  });

  it("a refused connection is expected and retried up to maxAttempts", async () => {
    const url = endpoint.baseUrl;
    await endpoint.close();
    const p = openAICompatible({ baseUrl: url, retry: { maxAttempts: 2, sleep: recordingSleep } });
    const err = await p.invoke(hello, {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelUnavailableError);
    expect((err as Error).message).toContain("ECONNREFUSED");
    expect(delays).toHaveLength(1);
  });
});

describe("modelFromFlag", () => {
  it('"echo" is the built-in echo model', () => {
    expect(modelFromFlag("echo")).toBe(echoModel);
  });

  it("an http base URL is an OpenAI-compatible endpoint keyed from MODEL_API_KEY, then OPENAI_API_KEY", async () => {
    endpoint.reply(sse([textChunk("a"), finishChunk("stop")]), sse([textChunk("b"), finishChunk("stop")]));
    await modelFromFlag(endpoint.baseUrl, {
      modelName: "m1",
      apiKeyEnv: { MODEL_API_KEY: "k1", OPENAI_API_KEY: "k2" },
    }).invoke(hello, {});
    await modelFromFlag(endpoint.baseUrl, { apiKeyEnv: { OPENAI_API_KEY: "k2" } }).invoke(hello, {});
    expect(endpoint.requests.map((r) => [r.headers["authorization"], r.body["model"]])).toEqual([
      ["Bearer k1", "m1"],
      ["Bearer k2", "from-request"],
    ]);
  });

  it("modelIdFlagReachesAnAzureStyleEndpoint: --model ID with --model-url, a path with ?api-version and an api-key header", async () => {
    endpoint.reply(sse([textChunk("a"), finishChunk("stop")]), sse([textChunk("b"), finishChunk("stop")]));
    await modelFromFlag("gpt-4o-mini", {
      url: `${endpoint.baseUrl}/openai/deployments/d1`,
      path: "/chat/completions?api-version=2024-02-01",
      authHeader: "api-key",
      apiKeyEnv: { MODEL_API_KEY: "k1" },
    }).invoke(hello, {});
    await modelFromFlag("llama3:8b", { url: endpoint.baseUrl, apiKeyEnv: { OPENAI_API_KEY: "k2" } }).invoke(hello, {});
    const [azure, plain] = endpoint.requests;
    expect(azure?.url).toBe("/v1/openai/deployments/d1/chat/completions?api-version=2024-02-01");
    expect([azure?.headers["api-key"], azure?.headers["authorization"], azure?.body["model"]]).toEqual([
      "k1",
      undefined,
      "gpt-4o-mini",
    ]);
    expect([plain?.url, plain?.headers["authorization"], plain?.body["model"]]).toEqual([
      "/v1/chat/completions",
      "Bearer k2",
      "llama3:8b",
    ]);
  });

  it("a model id without --model-url goes to the reference's default endpoint", () => {
    expect(DEFAULT_MODEL_URL).toBe("https://api.openai.com/v1");
    expect(modelFromFlag("gpt-4o-mini", { apiKeyEnv: {} }).name).toBe("openai-compatible");
  });

  it("anything else, and contradictory endpoint flags, are invalid arguments", () => {
    const cases: [string, ModelFlagOptions][] = [
      ["ftp://x", {}],
      ["", {}],
      ["two words", {}],
      ["echo", { url: "http://127.0.0.1:1/v1" }],
      ["echo", { path: "/x" }],
      ["http://127.0.0.1:1/v1", { url: "http://127.0.0.1:2/v1" }],
      ["gpt-4", { modelName: "other" }],
      ["gpt-4", { url: "not a url" }],
      ["gpt-4", { authHeader: "api key" }],
    ];
    for (const [flag, opts] of cases) {
      const err = (() => {
        try {
          modelFromFlag(flag, { apiKeyEnv: {}, ...opts });
          return undefined;
        } catch (e) {
          return e;
        }
      })();
      expect(err, `${flag} ${JSON.stringify(opts)}`).toBeInstanceOf(HostError);
      expect((err as HostError).code).toBe(ErrorCode.InvalidArgument);
    }
  });
});
