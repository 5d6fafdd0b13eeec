// The AI SDK as the host's model provider (docs/integrations.md §1): provider errors map onto the
// host's failure classes (docs/protocol.md §14.3) — a retryable or 408/409/425/429/5xx APICallError is
// expected and retried within the kit's modelAttempts inside one journaled call, any other failure a
// defect run once, an aborted call an interrupt.
import { APICallError } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { aiSdkModelProvider, modelFailureOf } from "../../src/adapters/ai-sdk/index.js";
import { EventKind } from "../../src/gen/agentsessions/v1/common_pb.js";
import { classifyFailure } from "../../src/model/types.js";
import { textMessage } from "../../src/model/text.js";
import { mockModel } from "../../docs/examples/ai-sdk-agent.js";
import { closeAll, openTestHost, records, signal } from "../tiers/helpers.js";

afterEach(closeAll);

const apiError = (statusCode: number, isRetryable = false) =>
  new APICallError({
    message: `HTTP ${statusCode}`,
    url: "http://model",
    requestBodyValues: {},
    statusCode,
    isRetryable,
  });

describe("ai-sdk model provider", () => {
  it("providerErrorsMapOntoTheRetryClasses", () => {
    for (const status of [408, 409, 425, 429, 500, 503])
      expect(classifyFailure(modelFailureOf(apiError(status)))).toBe("expected");
    expect(classifyFailure(modelFailureOf(apiError(400, true)))).toBe("expected");
    for (const status of [400, 401, 404, 422]) expect(classifyFailure(modelFailureOf(apiError(status)))).toBe("defect");
    expect(classifyFailure(modelFailureOf(new Error("malformed answer")))).toBe("defect");
    const aborted = new AbortController();
    aborted.abort();
    expect(classifyFailure(modelFailureOf(new Error("stopped"), aborted.signal))).toBe("interrupt");
  });

  it("anExpectedFailureIsRetriedInsideOneJournaledCallAndADefectRunsOnce", async () => {
    const script = mockModel();
    let failNext: Error[] = [apiError(503)];
    const flaky = new MockLanguageModelV3({
      modelId: "mock-model",
      doGenerate: async (o) => {
        const err = failNext.shift();
        if (err) throw err;
        return script.doGenerate(o);
      },
    });
    const host = await openTestHost(
      {
        harnesses: [
          {
            name: "weather",
            runtime: "local",
            target: fileURLToPath(new URL("../../docs/examples/ai-sdk-agent.ts", import.meta.url)),
          },
        ],
      },
      { model: aiSdkModelProvider(flaky) },
    );
    const { uid: s } = await host.createSession({ harness: "weather" });
    const ok = await host.placer.exec({
      session: s,
      inputs: [textMessage("user", "weather in Oslo?")],
      signal: signal(),
    });
    expect(ok.outputs.at(-1)).toMatch(/Oslo/);
    expect(flaky.doGenerateCalls).toHaveLength(3);
    expect((await records(host, s)).filter((r) => r.event.kind === EventKind.EVENT_MODEL_CALL)).toHaveLength(2);

    failNext = [apiError(400), apiError(400)];
    const before = flaky.doGenerateCalls.length;
    await expect(
      host.placer.exec({ session: s, inputs: [textMessage("user", "weather in Rome?")], signal: signal() }),
    ).rejects.toThrow(/HTTP 400/);
    expect(flaky.doGenerateCalls.length - before).toBe(1);
  });
});
