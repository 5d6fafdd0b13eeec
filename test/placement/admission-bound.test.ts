// Admission's Describe bound (src/placement/admission.ts): the runtime's describe sees a signal that
// fires with a TimeoutError after DESCRIBE_TIMEOUT_MS, or with the caller's own reason when the caller
// aborts first; either way admission fails with the documented code, and nothing of the bound (its timer,
// its listener on the caller's signal) is left behind once admission returns.
import { afterEach, describe, expect, it, vi } from "vitest";
import { create } from "@bufbuild/protobuf";
import { HarnessDescriptorSchema, type HarnessDescriptor } from "../../src/gen/agentsessions/v1/harness_pb.js";
import { ErrorCode, HostError } from "../../src/errors/index.js";
import { admit, DESCRIBE_TIMEOUT_MS } from "../../src/placement/admission.js";
import type { HarnessEntry } from "../../src/placement/harness-entry.js";
import { NO_CAPABILITIES, type Runtime } from "../../src/runtime/types.js";

/** A runtime whose describe answers at once (`hang` false) or only fails once its signal aborts. */
function entryWith(hang: boolean, seen: { signal?: AbortSignal }): HarnessEntry {
  const runtime = {
    name: "fake",
    capabilities: async () => NO_CAPABILITIES,
    describe: (signal?: AbortSignal): Promise<HarnessDescriptor> => {
      if (signal) seen.signal = signal;
      if (!hang) return Promise.resolve(create(HarnessDescriptorSchema, { id: "fake", version: "1" }));
      return new Promise((_, reject) => signal?.addEventListener("abort", () => reject(signal.reason)));
    },
  } as unknown as Runtime;
  return {
    name: "fake",
    source: "static",
    runtime,
    descriptorId: "",
    checkpointPolicy: "every-turn",
    state: "active",
  };
}

afterEach(() => {
  vi.useRealTimers();
});

describe("admission bounds Describe", () => {
  it("cuts a hanging Describe off after DESCRIBE_TIMEOUT_MS with a TimeoutError, as UNAVAILABLE", async () => {
    vi.useFakeTimers();
    const seen: { signal?: AbortSignal } = {};
    const admitted = admit(entryWith(true, seen));
    const outcome = expect(admitted).rejects.toMatchObject({ code: ErrorCode.Unavailable });
    await vi.advanceTimersByTimeAsync(DESCRIBE_TIMEOUT_MS);
    await outcome;
    expect(seen.signal?.aborted).toBe(true);
    expect(seen.signal?.reason).toMatchObject({ name: "TimeoutError" });
  });

  it("passes the caller's abort reason to the runtime and reports CANCELLED, leaving no listener on the caller", async () => {
    const caller = new AbortController();
    const added = vi.spyOn(caller.signal, "addEventListener");
    const removed = vi.spyOn(caller.signal, "removeEventListener");
    const seen: { signal?: AbortSignal } = {};
    const admitted = admit(entryWith(true, seen), caller.signal);
    const reason = new HostError(ErrorCode.Cancelled, "caller went away");
    caller.abort(reason);
    await expect(admitted).rejects.toMatchObject({ code: ErrorCode.Cancelled });
    expect(seen.signal?.reason).toBe(reason);
    expect(removed.mock.calls.length).toBe(added.mock.calls.length);
  });

  it("an answered Describe leaves no timer and no listener behind", async () => {
    vi.useFakeTimers();
    const caller = new AbortController();
    const added = vi.spyOn(caller.signal, "addEventListener");
    const removed = vi.spyOn(caller.signal, "removeEventListener");
    const seen: { signal?: AbortSignal } = {};
    const admission = await admit(entryWith(false, seen), caller.signal);
    expect(admission.descriptor.id).toBe("fake");
    expect(vi.getTimerCount()).toBe(0);
    expect(removed.mock.calls.length).toBe(added.mock.calls.length);
    expect(seen.signal?.aborted).toBe(false);
  });
});
