// Go-style single-dash long flags (CLI compatibility with agentctl scripts; docs/migrating-from-go.md).
import { describe, expect, it } from "vitest";
import { acceptGoStyleFlags } from "../../src/cli/go-flags.js";

const options = {
  session: { type: "string" },
  input: { type: "string", multiple: true },
  json: { type: "boolean" },
  h: { type: "boolean" },
} as const;

describe("Go-style flags", () => {
  it("accepts single-dash long flags as the Go flag package does, with or without =", () => {
    expect(acceptGoStyleFlags(["-session", "s1", "-input=hi", "-json"], options)).toEqual([
      "--session",
      "s1",
      "--input=hi",
      "--json",
    ]);
  });

  it("leaves values, unknown names, short options and everything after -- alone", () => {
    expect(acceptGoStyleFlags(["--input", "-session", "-bogus", "-h", "--", "-json"], options)).toEqual([
      "--input",
      "-session",
      "-bogus",
      "-h",
      "--",
      "-json",
    ]);
    expect(acceptGoStyleFlags(["-input", "-json"], options)).toEqual(["--input", "-json"]);
  });
});

describe("Go-style flags through the CLI", () => {
  it("an agentctl-style `get -session S -json` line works against a journal", async () => {
    const { mkdtempSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const { main } = await import("../../src/cli/run.js");
    const dir = mkdtempSync(join(tmpdir(), "hh-go-flags-"));
    try {
      const out: string[] = [];
      const io = { out: (t: string) => out.push(t), err: (t: string) => out.push(t) };
      const journal = join(dir, "j.db");
      expect(await main(["exec", "-journal", journal, "-input", "hi", "-json"], io)).toBe(0);
      const session = (JSON.parse(out[0] ?? "{}") as { session: string }).session;
      out.length = 0;
      expect(await main(["get", "-journal", journal, "-session", session, "-json"], io)).toBe(0);
      expect(out.join("\n")).toContain(session);
      expect(await main(["get", "-journal", journal, "-bogus", "x"], io)).toBe(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
