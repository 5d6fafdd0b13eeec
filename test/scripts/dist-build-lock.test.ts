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

/** A process that builds under `lock`: it logs its start and end, busy for `ms` in between. */
function builder(lock: string, log: string, name: string, ms: number): Promise<number | null> {
  const script = `
    import { appendFileSync } from "node:fs";
    import { whileLocked } from ${JSON.stringify(new URL("../support/dist-current.ts", import.meta.url).pathname)};
    whileLocked(() => {
      appendFileSync(${JSON.stringify(log)}, "start ${name}\\n");
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ${ms});
      appendFileSync(${JSON.stringify(log)}, "end ${name}\\n");
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
    const codes = await Promise.all([builder(lock, log, "a", 600), builder(lock, log, "b", 600)]);
    expect(codes).toEqual([0, 0]);
    const lines = readFileSync(log, "utf8").trim().split("\n");
    expect(lines).toHaveLength(4);
    // Each build's start is followed by its own end.
    expect(lines[1]).toBe(lines[0]?.replace("start", "end"));
    expect(lines[3]).toBe(lines[2]?.replace("start", "end"));
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
