// fileApplied (src/adapters/durable/applied.ts): a result put is served again across processes, and a
// torn last line — a host killed mid-append — is no result and does not swallow the next one.
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { fileApplied } from "../../src/adapters/durable/applied.js";

const dir = mkdtempSync(join(tmpdir(), "hh-applied-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("fileApplied", () => {
  it("aTornLastLineIsNoResultAndTheNextResultStartsOnItsOwnLine", async () => {
    const first = fileApplied(dir);
    await first.put("s1", "k1", { value: { n: 1 } });
    appendFileSync(join(dir, "s1.jsonl"), '{"key":"k2","res');
    const restarted = fileApplied(dir);
    expect(await restarted.get("s1", "k1")).toEqual({ value: { n: 1 } });
    expect(await restarted.get("s1", "k2")).toBeUndefined();
    await restarted.put("s1", "k2", { error: "boom" });
    expect(await fileApplied(dir).get("s1", "k2")).toEqual({ error: "boom" });
    expect(readFileSync(join(dir, "s1.jsonl"), "utf8").split("\n").at(-2)).toBe(
      '{"key":"k2","result":{"error":"boom"}}',
    );
  });
});
