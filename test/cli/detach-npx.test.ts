// Background servers however the CLI is started (docs/cli.md, "Background servers"), through the packed
// package installed in a project: real `npx`, `npm exec`, `./node_modules/.bin` and `node <bin>`.
// Invariants: a `--detach`ed server outlives the command that started it, whatever started it (it was
// stopped by its npx's exit, ~0.5 s after returning); `--detach --log-file F` starts and logs to F (it
// always exited 2); a foreground server started by npx still stops when that npx is killed.
import { spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { eventually } from "../fixtures/eventually.js";
import { bash, freePort, stopPidFiles } from "../docs/sh-script.js";
import { projectWorkdir as newProject } from "../package/shared.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
async function projectWorkdir(prefix: string): Promise<string> {
  const dir = await newProject(prefix);
  dirs.push(dir);
  return dir;
}

function alive(pid: number): boolean {
  try {
    return !/\)\s+[ZX]\s/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

/** How each launcher runs the installed bin from the project (cwd is a folder inside it). */
const LAUNCHERS = [
  ["npx", "npx harnesshost"],
  ["npm exec", "npm exec harnesshost --"],
  ["./node_modules/.bin", "./node_modules/.bin/harnesshost"],
  ["node bin", "node ./node_modules/harnesshost/bin/harnesshost.js"],
] as const;

describe("--detach from the installed package", () => {
  for (const [name, cli] of LAUNCHERS) {
    it(`aDetachedServerOutlivesTheCommandThatStartedIt: ${name}, with --log-file`, async () => {
      const work = await projectWorkdir("detach");
      const [p1, p2] = [await freePort(), await freePort()];
      const server = `127.0.0.1:${p1}`;
      // Start detached, then (through npx, which takes far longer than the old watcher's 0.5 s to
      // start) run a turn, stop it, and show the log: the server must be the one that answers.
      const script = [
        "set -euo pipefail",
        `${cli} serve --detach --pid-file s.pid --log-file logs/serve.log --addr ${server} --registry-addr 127.0.0.1:${p2} --http-addr off`,
        "cat s.pid",
        `npx harnesshost exec --server ${server} --harness echo --input hi`,
        `npx harnesshost exec --server ${server} --harness echo --input again`,
        "npx harnesshost stop --pid-file s.pid",
      ].join("\n");
      const out = await bash(script, work, 240_000).finally(() => stopPidFiles(work));
      const [pid, ...rest] = out.trimEnd().split("\n");
      expect(rest).toEqual(["echo:hi", "echo:again", `stopped pid ${pid}`]);
      const log = readFileSync(join(work, "logs/serve.log"), "utf8");
      expect(log).not.toContain("npx-exited");
      expect(log).toContain('"signal":"SIGTERM"');
      expect(existsSync(join(work, ".harnesshost/serve.log"))).toBe(false);
    }, 600_000);
  }

  it("aDetachedNodeOutlivesTheNpxThatStartedIt, with --log-file", async () => {
    const work = await projectWorkdir("detach-node");
    const script = [
      "set -euo pipefail",
      `npx harnesshost node --detach --pid-file n.pid --log-file node.log --harness echo --listen unix://${work}/n.sock`,
      "npx harnesshost conformance --help >/dev/null", // one more npx start: longer than the old watcher's period
      "cat n.pid",
    ].join("\n");
    const pid = Number((await bash(script, work, 240_000)).trim());
    try {
      expect(alive(pid)).toBe(true);
      expect(readFileSync(join(work, "node.log"), "utf8")).not.toContain("error");
    } finally {
      stopPidFiles(work);
    }
  }, 600_000);

  it("aForegroundServerStartedByNpxStopsWhenThatNpxIsKilled (real npx)", async () => {
    const work = await projectWorkdir("foreground");
    const [p1, p2] = [await freePort(), await freePort()];
    const args = `harnesshost serve --pid-file f.pid --addr 127.0.0.1:${p1} --registry-addr 127.0.0.1:${p2} --http-addr off`;
    const npx = spawn("npx", args.split(" "), { cwd: work, stdio: ["ignore", "ignore", "pipe"] });
    try {
      await new Promise<void>((resolve, reject) => {
        let text = "";
        npx.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
          text += chunk;
          if (text.includes("harnesshost listening")) resolve();
        });
        npx.once("exit", (code) => reject(new Error(`npx exited ${code}: ${text}`)));
      });
      const server = Number(readFileSync(join(work, "f.pid"), "utf8"));
      expect(server).not.toBe(npx.pid);
      npx.kill("SIGTERM");
      await eventually("the server to stop after its npx was killed", () => !alive(server), 60_000);
      expect(existsSync(join(work, "f.pid"))).toBe(false);
    } finally {
      npx.kill("SIGKILL");
      stopPidFiles(work);
    }
  }, 600_000);
});
