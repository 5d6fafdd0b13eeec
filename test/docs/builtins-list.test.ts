// The README names the built-in harnesses exactly as the code has them: what `node --harness` and
// `conformance --harness` accept (builtinHarnesses) and what `serve` serves by default (BUILTIN_STATICS).
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { builtinHarnesses } from "../../harnesses/index.js";
import { BUILTIN_STATICS } from "../../src/host/host.js";

const readme = readFileSync(join(resolve(import.meta.dirname, "../.."), "README.md"), "utf8").replace(/\s+/g, " ");
const names = (text: string): string[] => [...text.matchAll(/`([a-z]+)`/g)].map((m) => m[1]!).sort();

describe("README built-in harness lists", () => {
  it("builtinsListMatchesTheCode: node's list is builtinHarnesses, serve's default list is BUILTIN_STATICS", () => {
    const node = /`--harness` on `node` takes a built-in name \(([^)]*)\)/.exec(readme)?.[1] ?? "";
    expect(names(node)).toEqual(Object.keys(builtinHarnesses).sort());
    const served = /and the built-in harnesses (.*?)\. The second/.exec(readme)?.[1] ?? "";
    const servedNames = [...served.matchAll(/`([a-z]+)` \(/g)].map((m) => m[1]!).sort();
    expect(servedNames).toEqual(BUILTIN_STATICS.map((b) => b.name).sort());
    expect(readme).toContain("`serve` serves all of them by default except `chat`");
    expect(BUILTIN_STATICS.map((b) => b.name)).not.toContain("chat");
  });
});
