// withRetry retries only expected failures (docs/protocol.md §14.3): defects and interrupts surface from
// the attempt that raised them, and a fired signal ends a backoff sleep at once.
import { describe, expect, it } from "vitest";
import {
  abortableSleep,
  backoffDelayMs,
  classifyFailure,
  ModelInterruptedError,
  ModelRequestError,
  ModelUnavailableError,
  withRetry,
  type RetryInfo,
  type Sleep,
} from "../../src/model/index.js";
import { ErrorCode, HostError } from "../../src/errors/index.js";

/** A sleep that records the requested delays and returns at once. */
function recordingSleep(): { sleep: Sleep; delays: number[] } {
  const delays: number[] = [];
  return { delays, sleep: async (ms) => void delays.push(ms) };
}

describe("classifyFailure", () => {
  it("sorts the taxonomy", () => {
    expect(classifyFailure(new ModelUnavailableError("503", { status: 503 }))).toBe("expected");
    expect(classifyFailure(new ModelRequestError("400", { status: 400 }))).toBe("defect");
    expect(classifyFailure(new ModelInterruptedError())).toBe("interrupt");
    expect(classifyFailure(new DOMException("aborted", "AbortError"))).toBe("interrupt");
    expect(
      classifyFailure(new TypeError("fetch failed", { cause: Object.assign(new Error("x"), { code: "ECONNRESET" }) })),
    ).toBe("expected");
    expect(classifyFailure(new HostError(ErrorCode.Unavailable, "down"))).toBe("expected");
    expect(classifyFailure(new TypeError("undefined is not a function"))).toBe("defect");
    expect(classifyFailure("a string")).toBe("defect");
  });
});

describe("withRetry", () => {
  it("retries an expected failure up to maxAttempts, then rethrows the last error", async () => {
    const { sleep, delays } = recordingSleep();
    const attempts: number[] = [];
    const retries: RetryInfo[] = [];
    const run = withRetry(
      async (attempt) => {
        attempts.push(attempt);
        throw new ModelUnavailableError(`down ${attempt}`, { status: 503 });
      },
      { maxAttempts: 3, initialBackoffMs: 100, multiplier: 2, random: () => 0.5, sleep },
      undefined,
      (info) => retries.push(info),
    );
    await expect(run).rejects.toThrow("down 3");
    expect(attempts).toEqual([1, 2, 3]);
    expect(delays).toEqual([50, 100]); // full jitter: 0.5 × 100, 0.5 × 200
    expect(retries.map((r) => r.attempt)).toEqual([1, 2]);
  });

  it("returns the first success after expected failures", async () => {
    const { sleep } = recordingSleep();
    let calls = 0;
    const value = await withRetry(
      async () => {
        calls++;
        if (calls < 3) throw new ModelUnavailableError("blip");
        return "ok";
      },
      { sleep },
    );
    expect(value).toBe("ok");
    expect(calls).toBe(3);
  });

  it("runs a defect exactly once even with retries left", async () => {
    const { sleep, delays } = recordingSleep();
    let calls = 0;
    const run = withRetry(
      async () => {
        calls++;
        throw new ModelRequestError("bad request", { status: 400 });
      },
      { maxAttempts: 5, sleep },
    );
    await expect(run).rejects.toBeInstanceOf(ModelRequestError);
    expect(calls).toBe(1);
    expect(delays).toEqual([]);
  });

  it("treats an unknown error as a defect and does not retry it", async () => {
    let calls = 0;
    await expect(
      withRetry(
        async () => {
          calls++;
          throw new RangeError("bug");
        },
        { maxAttempts: 5, sleep: async () => undefined },
      ),
    ).rejects.toBeInstanceOf(RangeError);
    expect(calls).toBe(1);
  });

  it("does not retry an interrupt", async () => {
    let calls = 0;
    const run = withRetry(
      async () => {
        calls++;
        throw new ModelInterruptedError();
      },
      { maxAttempts: 5, sleep: async () => undefined },
    );
    await expect(run).rejects.toBeInstanceOf(ModelInterruptedError);
    expect(calls).toBe(1);
  });

  it("turns any failure after the signal fired into an interrupt, without retrying", async () => {
    const controller = new AbortController();
    let calls = 0;
    const run = withRetry(
      async () => {
        calls++;
        controller.abort();
        throw new ModelUnavailableError("would be retried");
      },
      { maxAttempts: 5, sleep: async () => undefined },
      controller.signal,
    );
    await expect(run).rejects.toBeInstanceOf(ModelInterruptedError);
    expect(calls).toBe(1);
  });

  it("never calls fn when the signal has already fired", async () => {
    let calls = 0;
    await expect(withRetry(async () => ++calls, {}, AbortSignal.abort())).rejects.toBeInstanceOf(ModelInterruptedError);
    expect(calls).toBe(0);
  });

  it("aborts a long backoff sleep as soon as the signal fires", async () => {
    const controller = new AbortController();
    let calls = 0;
    const run = withRetry(
      async () => {
        calls++;
        throw new ModelUnavailableError("slow down", { status: 429, retryAfterMs: 3_600_000 });
      },
      { maxAttempts: 3, maxBackoffMs: 3_600_000 }, // real sleep: an hour, unless the abort cuts it
      controller.signal,
      () => setImmediate(() => controller.abort()),
    );
    await expect(run).rejects.toBeInstanceOf(ModelInterruptedError);
    expect(calls).toBe(1);
  });

  it("abortableSleep rejects promptly on abort and resolves otherwise", async () => {
    const controller = new AbortController();
    const long = abortableSleep(3_600_000, controller.signal);
    controller.abort();
    await expect(long).rejects.toBeInstanceOf(ModelInterruptedError);
    await expect(abortableSleep(0)).resolves.toBeUndefined();
  });

  it("honours Retry-After, capped at maxBackoffMs", () => {
    expect(backoffDelayMs({ maxBackoffMs: 5000 }, 1, new ModelUnavailableError("x", { retryAfterMs: 2000 }))).toBe(
      2000,
    );
    expect(backoffDelayMs({ maxBackoffMs: 5000 }, 1, new ModelUnavailableError("x", { retryAfterMs: 60_000 }))).toBe(
      5000,
    );
    expect(
      backoffDelayMs(
        { initialBackoffMs: 200, maxBackoffMs: 5000, random: () => 0.999 },
        10,
        new ModelUnavailableError("x"),
      ),
    ).toBe(4995);
  });

  it("refuses an invalid policy", async () => {
    await expect(withRetry(async () => 1, { maxAttempts: 0 })).rejects.toThrow(/retry policy/);
  });
});
