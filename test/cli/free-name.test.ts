// Freeing a retired harness name (docs/cli.md, "Freeing a harness name"), through the real command: a
// mistyped registration no longer uses its name up for good — retire it, free it, register the name
// again with another spec. The old registration's sessions stay readable (get, verify) but never run
// on the new registration; active, static and unknown names cannot be freed.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort, stopPidFiles } from "../docs/sh-script.js";
import { hh } from "./bin.js";

const dir = mkdtempSync(join(tmpdir(), "hh-free-name-"));
afterAll(() => {
  stopPidFiles(dir);
  rmSync(dir, { recursive: true, force: true });
});

describe("freeing a retired harness name (real bin)", () => {
  it("retiredNameCanBeFreedAndReused: the old sessions stay readable and never run on the newcomer", async () => {
    const [p1, p2] = [await freePort(), await freePort()];
    const server = `127.0.0.1:${p1}`;
    const registry = `127.0.0.1:${p2}`;
    const sock = `unix://${join(dir, "echo.sock")}`;
    const serve = ["--data", dir, "--addr", server, "--registry-addr", registry, "--http-addr", "off"];
    expect((await hh(dir, "serve", "--detach", "--pid-file", join(dir, "serve.pid"), ...serve)).code).toBe(0);
    const node = ["--harness", "echo", "--listen", sock];
    expect((await hh(dir, "node", "--detach", "--pid-file", join(dir, "node.pid"), ...node)).code).toBe(0);
    const register = (...extra: string[]) =>
      hh(
        dir,
        "harness",
        "register",
        "--server",
        registry,
        "--name",
        "tpyo",
        "--address",
        sock,
        "--resumability",
        "STATELESS_REPLAY",
        ...extra,
      );
    const harness = (sub: string, name: string) => hh(dir, "harness", sub, "--server", registry, "--name", name);

    expect((await register()).code).toBe(0);
    const first = await hh(dir, "exec", "--server", server, "--harness", "tpyo", "--input", "hi", "--json");
    expect(first.code).toBe(0);
    const old = (JSON.parse(first.stdout) as { session: string }).session;

    // Registrations are immutable: while the name is held, another spec is refused.
    expect((await register("--descriptor-id", "echo")).code).toBe(4);
    // An active registration cannot be freed.
    const active = await harness("free", "tpyo");
    expect(active.code).toBe(4);
    expect(active.stderr).toContain("retire it first");

    expect((await harness("retire", "tpyo")).code).toBe(0);
    const freed = await harness("free", "tpyo");
    expect(freed.code).toBe(0);
    expect(freed.stdout).toMatch(/^freed harness tpyo source=registered state=retired /);
    expect((await harness("get", "tpyo")).code).toBe(3);

    // Its session stays readable.
    const got = await hh(dir, "get", "--server", server, "--session", old);
    expect(got.code).toBe(0);
    expect(got.stdout).toContain(` harness=tpyo `);
    expect((await hh(dir, "verify", "--server", server, "--session", old)).stdout).toMatch(/^ok /);

    // The name is free: another spec registers, serves new sessions, and refuses the old one.
    const again = await register("--descriptor-id", "echo");
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/^created harness tpyo /);
    const fresh = await hh(dir, "exec", "--server", server, "--harness", "tpyo", "--input", "new");
    expect(fresh.stdout).toBe("echo:new\n");
    const refused = await hh(dir, "exec", "--server", server, "--session", old, "--input", "again");
    expect(refused.code).toBe(4);
    expect(refused.stderr).toContain(`session ${old} ran on an earlier registration of harness "tpyo"`);
    expect((await hh(dir, "get", "--server", server, "--session", old)).stdout).toBe(got.stdout);

    // Static and unknown names cannot be freed.
    expect((await harness("free", "echo")).code).toBe(4);
    expect((await harness("free", "ghost")).code).toBe(3);

    for (const f of ["node.pid", "serve.pid"]) expect((await hh(dir, "stop", "--pid-file", join(dir, f))).code).toBe(0);
  }, 600_000);
});
