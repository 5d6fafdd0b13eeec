// Go-style single-dash long flags (issue 22, CLI compatibility with agentctl scripts).
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
