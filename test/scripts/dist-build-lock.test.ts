// The dist/ build lock of test/support/dist-current.ts (vitest's global set-up, run by each project's
// vitest process side by side): two runs never build at once — the second waits for the first's lock
// to be released — and a lock left by a run that died is taken over instead of waited on until the
// deadline.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { whileLocked } from "../support/dist-current.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), "hh-dist-lock-"));
  dirs.push(dir);
  return dir;
}

/**
 * A process that builds under `lock`. It logs "want NAME" before it asks for the lock, then "start" and
 * "end" around its build; the build waits until `other` has logged that it wants the lock (up to 30 s,
 * else the process exits 3), so the two runs always contend for it.
 */
function builder(lock: string, log: string, name: string, other: string): Promise<number | null> {
  const script = `
    import { appendFileSync, readFileSync } from "node:fs";
    import { whileLocked } from ${JSON.stringify(new URL("../support/dist-current.ts", import.meta.url).pathname)};
    const log = ${JSON.stringify(log)};
    appendFileSync(log, "want ${name}\\n");
    whileLocked(() => {
      appendFileSync(log, "start ${name}\\n");
      const deadline = Date.now() + 30000;
      while (!readFileSync(log, "utf8").includes("want ${other}\\n")) {
        if (Date.now() > deadline) process.exit(3);
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
      }
      appendFileSync(log, "end ${name}\\n");
    }, ${JSON.stringify(lock)}, 60000);
  `;
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { stdio: "inherit" });
  return new Promise((resolve) => child.once("exit", resolve));
}

describe("the dist/ build lock", () => {
  it("twoRunsNeverBuildAtOnce: the second waits until the first released the lock", async () => {
    const dir = scratch();
    const lock = join(dir, "build.lock");
    const log = join(dir, "log");
    writeFileSync(log, "");
    const codes = await Promise.all([builder(lock, log, "a", "b"), builder(lock, log, "b", "a")]);
    expect(codes).toEqual([0, 0]);
    // The first build held the lock until the other run was asking for it: their builds never overlap.
    const builds = readFileSync(log, "utf8")
      .trim()
      .split("\n")
      .filter((l) => !l.startsWith("want "));
    expect(builds).toHaveLength(4);
    expect(builds[1]).toBe(builds[0]?.replace("start", "end"));
    expect(builds[3]).toBe(builds[2]?.replace("start", "end"));
  });

  it("aLockLeftByARunThatDiedIsTakenOver", async () => {
    const dir = scratch();
    const lock = join(dir, "build.lock");
    // The lock of a process that has exited, written longer ago than a young lock's grace.
    const dead = spawn(process.execPath, ["-e", "0"]);
    const pid = dead.pid;
    await new Promise((resolve) => dead.once("exit", resolve));
    mkdirSync(lock);
    writeFileSync(join(lock, "pid"), String(pid));
    const past = new Date(Date.now() - 60_000);
    utimesSync(lock, past, past);
    let built = false;
    whileLocked(
      () => {
        built = true;
      },
      lock,
      30_000,
    );
    expect(built).toBe(true);
  });

  it("aLockHeldByALiveRunIsWaitedForUntilTheDeadline, then refused with its path", () => {
    const dir = scratch();
    const lock = join(dir, "build.lock");
    mkdirSync(lock);
    writeFileSync(join(lock, "pid"), String(process.pid)); // this process: alive
    let built = false;
    expect(() =>
      whileLocked(
        () => {
          built = true;
        },
        lock,
        300,
      ),
    ).toThrow(`dist/ build lock ${lock} held for over 300 ms`);
    expect(built).toBe(false);
  });
});
