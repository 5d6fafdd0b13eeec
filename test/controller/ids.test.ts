// Identifier shapes (src/controller/ids.ts): ids keep the reference's shapes and never repeat, also
// across refills of the pooled CSPRNG bytes they are drawn from.
import { describe, expect, it } from "vitest";
import { isSessionUid, newCallId, newExecutionId, newSessionUid, randomHex } from "../../src/controller/ids.js";
import { mintRequestId } from "../../src/server/request-id.js";

describe("ids", () => {
  it("have the reference's shapes", () => {
    expect(newExecutionId()).toMatch(/^[0-9a-f]{16}$/);
    expect(newCallId()).toMatch(/^[0-9a-f]{16}$/);
    expect(isSessionUid(newSessionUid())).toBe(true);
    expect(mintRequestId()).toMatch(/^[0-9a-f]{24}$/);
  });

  it("do not repeat across many pool refills", () => {
    // 4,000 × 12 bytes is ~12 refills of the 4 KiB pool; a reused or unrefreshed pool repeats ids.
    const ids = Array.from({ length: 4000 }, () => randomHex(12));
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{24}$/);
  });

  it("refuses a byte count the pool cannot serve", () => {
    expect(() => randomHex(0)).toThrow(RangeError);
    expect(() => randomHex(4097)).toThrow(RangeError);
    expect(randomHex(4096)).toHaveLength(8192);
  });
});
