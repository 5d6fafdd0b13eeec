// The limits table: defaults resolve, overrides are validated, refusals name their limit, and
// docs/operations.md carries the table rendered from src/limits/table.ts (one fact, one place).
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { status } from "@grpc/grpc-js";
import { describe, expect, it } from "vitest";
import { ErrorCode, grpcStatusOf } from "../../src/errors/index.js";
import {
  DEFAULT_LIMITS,
  LIMIT_NAMES,
  LIMIT_TABLE,
  beyondLimit,
  limitsTableMarkdown,
  overLimit,
  parseLimitFlag,
  resolveLimits,
} from "../../src/limits/index.js";

const repo = resolve(import.meta.dirname, "../..");

describe("limits table", () => {
  it("every limit documents its default, unit and why", () => {
    for (const name of LIMIT_NAMES) {
      const spec = LIMIT_TABLE[name];
      expect(Number.isSafeInteger(spec.default), name).toBe(true);
      expect(spec.what.length, name).toBeGreaterThan(20);
      expect(spec.why.length, name).toBeGreaterThan(20);
      expect(DEFAULT_LIMITS[name]).toBe(spec.default);
    }
  });

  it("docs/operations.md carries the limits table rendered from src/limits/table.ts", () => {
    const doc = readFileSync(join(repo, "docs/operations.md"), "utf8");
    const m = /<!-- limits-table:begin -->\n([\s\S]*?)\n<!-- limits-table:end -->/.exec(doc);
    expect(m, "limits-table markers in docs/operations.md").not.toBeNull();
    const normalize = (t: string): string[] =>
      t
        .split("\n")
        .map((l) => l.replace(/\s*\|\s*/g, "|").replace(/\|-+(?=\|)/g, "|-"))
        .filter((l) => l !== "");
    expect(normalize(m?.[1] ?? "")).toEqual(normalize(limitsTableMarkdown()));
  });

  it("overrides replace defaults; unknown names and values below the minimum are refused", () => {
    const limits = resolveLimits({ inputBytes: 2048, historyCacheBytes: 0 });
    expect(limits.inputBytes).toBe(2048);
    expect(limits.historyCacheBytes).toBe(0);
    expect(limits.inputParts).toBe(DEFAULT_LIMITS.inputParts);
    expect(() => resolveLimits({ inputParts: 0 })).toThrow();
    expect(() => resolveLimits({ nope: 1 } as never)).toThrow();
  });

  it("--limit flags parse NAME=VALUE with byte suffixes only on byte limits", () => {
    expect(parseLimitFlag("inputBytes=4MiB")).toEqual(["inputBytes", 4 * 1024 * 1024]);
    expect(parseLimitFlag("inputParts=10")).toEqual(["inputParts", 10]);
    expect(() => parseLimitFlag("inputParts=1KiB")).toThrow(/not in bytes/);
    expect(() => parseLimitFlag("bogus=1")).toThrow(/unknown limit "bogus"/);
    expect(() => parseLimitFlag("inputBytes")).toThrow(/NAME=INTEGER/);
  });

  it("a refusal names its limit with RESOURCE_EXHAUSTED or INVALID_ARGUMENT", () => {
    const over = overLimit("inputBytes", 1024 * 1024, 3 * 1024 * 1024, "Exec inputs");
    expect(over.code).toBe(ErrorCode.ResourceExhausted);
    expect(grpcStatusOf(over.code)).toBe(status.RESOURCE_EXHAUSTED);
    expect(over.message).toBe(
      "Exec inputs (3 MiB) exceeds limit inputBytes=1 MiB (docs/operations.md, serve --limit inputBytes=N)",
    );
    const deep = beyondLimit("nestingDepth", 32, "input 0 nests 40 levels");
    expect(grpcStatusOf(deep.code)).toBe(status.INVALID_ARGUMENT);
    expect(deep.message).toContain("nestingDepth=32 levels");
  });
});
