// The version commands through the real bin against a served host (docs/cli.md, "Versions"):
// `harness register --version`, `harness list` version lines with pinned sessions, `harness retire
// --version` refused (exit 4) listing them while pinned, and `upgrade` (exit 0, then already on it).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { connect } from "../../src/client/index.js";
import { serveHarness, type HarnessNode } from "../../src/node/index.js";
import { hh } from "../cli/bin.js";
import { versioned } from "../fixtures/harnesses/versioned.js";
import { startFixture, type Fixture } from "../server/helpers.js";

const cwd = mkdtempSync(join(tmpdir(), "hh-versions-cli-"));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));
let fx: Fixture | undefined;
const nodes: HarnessNode[] = [];
afterEach(async () => {
  await fx?.close();
  await Promise.all(nodes.splice(0).map((n) => n.close()));
  fx = undefined;
});

async function node(version: string): Promise<string> {
  const n = await serveHarness(versioned(version, "say "), { listen: "127.0.0.1:0", actors: false });
  nodes.push(n);
  return n.address;
}

describe("version commands (bin)", () => {
  it("register --version, list, retire --version (refused while pinned) and upgrade", async () => {
    const f = (fx = await startFixture());
    const reg = f.server.registryAddr;
    const register = (v: string, address: string) =>
      hh(
        cwd,
        "harness",
        "register",
        "--server",
        reg,
        "--name",
        "ver",
        "--version",
        v,
        "--address",
        address,
        "--resumability",
        "STATELESS_REPLAY",
      );
    const r1 = await register("1", await node("1"));
    expect(r1.code, r1.stderr).toBe(0);
    expect(r1.stdout).toContain("created harness ver@1");
    const client = connect({ address: f.server.addr });
    let uid: string;
    try {
      uid = (await client.sessions.exec({ harness: "ver", input: "a" }).result()).session.metadata?.uid ?? "";
    } finally {
      client.close();
    }
    expect((await register("2", await node("2"))).code).toBe(0);
    const list = await hh(cwd, "harness", "list", "--server", reg);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toContain(
      `version ver@1 source=registered state=active default=false pinned=1 sessions=${uid}`,
    );
    expect(list.stdout).toContain("version ver@2 source=registered state=active default=true pinned=0");
    const refused = await hh(cwd, "harness", "retire", "--server", reg, "--name", "ver", "--version", "1");
    expect(refused.code).toBe(4);
    expect(refused.stderr).toContain(uid);
    const up = await hh(cwd, "upgrade", "--server", f.server.addr, "--session", uid, "--to-version", "2");
    expect(up.code, up.stderr).toBe(0);
    expect(up.stdout).toMatch(
      new RegExp(`^session ${uid} upgraded from version "1" to "2" at seq \\d+ replayed_turns=1`),
    );
    const again = await hh(cwd, "upgrade", "--server", f.server.addr, "--session", uid, "--to-version", "2", "--json");
    expect(JSON.parse(again.stdout)).toMatchObject({ fromVersion: "2", toVersion: "2", upgradeSeq: 0 });
    const retired = await hh(cwd, "harness", "retire", "--server", reg, "--name", "ver", "--version", "1");
    expect(retired.code, retired.stderr).toBe(0);
    expect(retired.stdout).toContain("version ver@1 source=registered state=retired default=false pinned=0");
  }, 180_000);
});
