// Exit semantics (the fact-log actor's Fail / Die / Interrupt) through a real Host: only expected
// failures are retried, where the policy allows (inside the model provider); a defect with retries
// left runs once; an interrupt is not retried; the controller itself never re-runs a harness.
import { afterEach, describe, expect, it } from "vitest";
import { classifyTurnFailure } from "../../src/controller/index.js";
import { textMessage } from "../../src/controller/events.js";
import { EventKind } from "../../src/gen/agentsessions/v1/common_pb.js";
import { withRetry } from "../../src/model/retry.js";
import {
  ModelInterruptedError,
  ModelRequestError,
  ModelUnavailableError,
  type ModelProvider,
} from "../../src/model/types.js";
import { closeAll, openTestHost, records, signal } from "../tiers/helpers.js";

afterEach(closeAll);

/** A provider retrying with the given schedule whose attempts fail with `failures` in order, then succeed. */
function scripted(failures: Error[]): ModelProvider & { attempts: number } {
  const provider = {
    name: "scripted",
    attempts: 0,
    async invoke() {
      return withRetry(
        async () => {
          const failure = failures[provider.attempts++];
          if (failure) throw failure;
          return { message: textMessage("assistant", "ok") };
        },
        { maxAttempts: 4, initialBackoffMs: 0, maxBackoffMs: 0 },
      );
    },
  };
  return provider;
}

async function turnWith(model: ModelProvider) {
  const host = await openTestHost({}, { model });
  const s = (await host.createSession({ harness: "echo" })).uid;
  const outcome = await host.placer.exec({ session: s, inputs: [textMessage("user", "x")], signal: signal() }).then(
    (r) => ({ ok: true as const, outputs: r.outputs }),
    (err: unknown) => ({ ok: false as const, err }),
  );
  return { outcome, kinds: (await records(host, s)).map((r) => r.event.kind) };
}

describe("exit semantics", () => {
  it("expected failures are retried where the policy allows (control)", async () => {
    const model = scripted([
      new ModelUnavailableError("503", { status: 503 }),
      new ModelUnavailableError("503", { status: 503 }),
    ]);
    const { outcome, kinds } = await turnWith(model);
    expect(outcome).toEqual({ ok: true, outputs: ["ok"] });
    expect(model.attempts).toBe(3);
    expect(kinds.at(-1)).toBe(EventKind.EVENT_END);
  });

  it("a defect with retries left runs once, and the turn ends with ERROR (no END)", async () => {
    const defect = new ModelRequestError("400 bad request", { status: 400 });
    const model = scripted([defect, defect, defect]);
    const { outcome, kinds } = await turnWith(model);
    expect(outcome.ok).toBe(false);
    expect(model.attempts).toBe(1);
    expect(classifyTurnFailure(defect)).toBe("defect");
    expect(kinds.at(-1)).toBe(EventKind.EVENT_ERROR);
  });

  it("an interrupt is not retried", async () => {
    const interrupt = new ModelInterruptedError();
    const model = scripted([interrupt, interrupt]);
    const { outcome, kinds } = await turnWith(model);
    expect(outcome.ok).toBe(false);
    expect(model.attempts).toBe(1);
    expect(classifyTurnFailure(interrupt)).toBe("interrupt");
    expect(kinds.at(-1)).toBe(EventKind.EVENT_ERROR);
  });

  it("a harness that throws a defect is run once by the controller (never re-run)", async () => {
    let runs = 0;
    const host = await openTestHost();
    const runtime = host.registry.resolve("echo").runtime;
    const create = runtime.create.bind(runtime);
    runtime.create = async (spec) => {
      const inc = await create(spec);
      return {
        ...inc,
        harness: {
          describe: () => inc.harness.describe(),
          run: async () => {
            runs++;
            throw new TypeError("bug");
          },
        },
      };
    };
    const s = (await host.createSession({ harness: "echo" })).uid;
    await expect(
      host.placer.exec({ session: s, inputs: [textMessage("user", "x")], signal: signal() }),
    ).rejects.toThrow(/bug/);
    expect(runs).toBe(1);
    expect(classifyTurnFailure(new TypeError("bug"))).toBe("defect");
  });
});
