// src/paths.ts: the package root and the CLI a host spawns its nodes with, from source. (From dist/,
// test/package/ runs the installed package, whose conformance run spawns nodes with bin/harnesshost.js.)
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CLI_SCRIPT, FROM_SOURCE, PACKAGE_ROOT } from "../../src/paths.js";

describe("package paths", () => {
  it("the package root holds this package's package.json and proto/", () => {
    const pkg = JSON.parse(readFileSync(join(PACKAGE_ROOT, "package.json"), "utf8")) as { name: string };
    expect(pkg.name).toBe("harnesshost");
    expect(existsSync(join(PACKAGE_ROOT, "proto/agentsessions/v1/session.proto"))).toBe(true);
  });

  it("running from source, a host spawns the source launcher, so a node runs the code its host runs", () => {
    expect(FROM_SOURCE).toBe(true);
    expect(CLI_SCRIPT).toBe(join(PACKAGE_ROOT, "scripts/harnesshost-src.mjs"));
    expect(existsSync(CLI_SCRIPT)).toBe(true);
  });
});
