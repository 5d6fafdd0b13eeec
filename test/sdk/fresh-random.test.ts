// The SDK's per-copy randomness (src/harness/fresh-random.ts, exported by harnesshost/sdk): values are drawn from the kernel at each
// call, so restores and fork children of one memory actor draw different values; the forms are those
// of Node's own generators (a v4 UUID, a float in [0, 1)). The fork case across copies of one
// snapshot is the conformance check memory.fork-randomness (test/conformance).
import { describe, expect, it } from "vitest";
import { freshRandom, freshRandomBytes, freshRandomUUID } from "../../src/sdk/index.js";

describe("fresh randomness", () => {
  it("freshRandomUUIDIsAVersion4UuidAndNeverRepeats", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const u = freshRandomUUID();
      expect(u).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      seen.add(u);
    }
    expect(seen.size).toBe(200);
  });

  it("freshRandomIsAFloatInTheUnitInterval and freshRandomBytesHasTheLengthAsked", () => {
    for (let i = 0; i < 200; i++) {
      const r = freshRandom();
      expect(r).toBeGreaterThanOrEqual(0);
      expect(r).toBeLessThan(1);
    }
    expect(freshRandomBytes(0)).toHaveLength(0);
    expect(freshRandomBytes(33)).toHaveLength(33);
    expect(() => freshRandomBytes(-1)).toThrow(RangeError);
  });
});
