// The local runtime keeps at most localActors harness instances (docs/operations.md, "Limits"):
// the least recently used goes first, and a dropped session gets a fresh instance at its next turn.
import { describe, expect, it } from "vitest";
import { LocalRuntime } from "../../src/runtime/local.js";
import type { Harness } from "../../src/harness/types.js";

describe("LocalRuntime actors", () => {
  it("localRuntimeKeepsAtMostLocalActorsInstances", async () => {
    let made = 0;
    const runtime = new LocalRuntime(() => {
      made++;
      return {} as Harness;
    }, 3);
    for (const s of ["a", "b", "c"]) await runtime.create({ sessionUid: s, harnessName: "h" });
    expect((await runtime.create({ sessionUid: "a", harnessName: "h" })).origin).toBe("attached");
    await runtime.create({ sessionUid: "d", harnessName: "h" });
    expect(await runtime.status("b")).toBe("NONE");
    for (const s of ["a", "c", "d"]) expect(await runtime.status(s)).toBe("LIVE");
    expect((await runtime.create({ sessionUid: "b", harnessName: "h" })).origin).toBe("created");
    expect(made).toBe(5);
  });
});
