// Explicit wiring: what the program is made of is listed in tables, never registered by importing a
// module for its side effect. Invariants: every command a commands/ module exports is in the CLI's
// command table; the runtime kinds a harness spec accepts are exactly the runtime table's; no module
// of src/ or harnesses/ is imported for its side effect alone.
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { commands } from "../../src/cli/commands/index.js";
import { HarnessSpecFlag } from "../../src/host/config.js";
import { RUNTIME_KINDS } from "../../src/runtime/table.js";

const repo = resolve(import.meta.dirname, "../..");

function tsFiles(dir: string): string[] {
  return readdirSync(join(repo, dir), { recursive: true, encoding: "utf8" })
    .filter((f) => /\.ts$/.test(f) && !f.startsWith("gen/") && !f.split("/").includes("node_modules"))
    .map((f) => join(dir, f));
}

function isCommand(value: unknown): value is { name: string; run: unknown } {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { name?: unknown }).name === "string" &&
    typeof (value as { run?: unknown }).run === "function"
  );
}

describe("explicit wiring", () => {
  it("everyExportedCommandIsInTheCommandTable", async () => {
    const listed = new Set(commands.map((c) => c.name));
    const dir = join(repo, "src/cli/commands");
    const exported: string[] = [];
    for (const file of readdirSync(dir).filter((f) => f.endsWith(".ts") && f !== "index.ts")) {
      const mod = (await import(join(dir, file))) as Record<string, unknown>;
      for (const value of Object.values(mod)) if (isCommand(value)) exported.push(value.name);
    }
    expect(exported.length).toBeGreaterThanOrEqual(listed.size);
    expect(exported.filter((name) => !listed.has(name))).toEqual([]);
  });

  it("theRuntimeKindsASpecAcceptsAreTheRuntimeTable", () => {
    expect([...HarnessSpecFlag.shape.runtime.options].sort()).toEqual([...RUNTIME_KINDS].sort());
  });

  it("noModuleIsImportedForItsSideEffect", () => {
    const bare = [...tsFiles("src"), ...tsFiles("harnesses")].flatMap((file) =>
      [...readFileSync(join(repo, file), "utf8").matchAll(/^\s*import\s+["'][^"']+["'];?\s*$/gm)].map(
        (m) => `${file}: ${m[0].trim()}`,
      ),
    );
    expect(bare).toEqual([]);
  });
});
