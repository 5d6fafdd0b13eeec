// Background servers are race-free (docs/cli.md, "Background servers"), through the real command:
// `serve --detach` returns only once both ports listen (the next command needs no wait), writes its pid
// file, and `stop` returns only once the server has exited and freed its ports; a server that cannot
// start makes `--detach` fail with its own status and log; the bin runs the server in its own process,
// so the pid a shell's `$!` sees is the server's; docs/cli.md's example runs as written.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runDoc } from "../docs/npx-doc.js";
import { freePort, shBlocks, stopPidFiles } from "../docs/sh-script.js";
import { projectWorkdir } from "../package/shared.js";
import { BIN, hh, REPO } from "./bin.js";

const dir = mkdtempSync(join(tmpdir(), "hh-background-"));
afterAll(() => {
  stopPidFiles(dir);
  rmSync(dir, { recursive: true, force: true });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/\)\s+[ZX]\s/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

const pidIn = (file: string): number => Number(readFileSync(file, "utf8").trim());

describe("background servers (real bin)", () => {
  it("detachedServeIsReadyWhenTheCommandReturns: exec right after, stop frees the ports", async () => {
    const [p1, p2] = [await freePort(), await freePort()];
    const server = `127.0.0.1:${p1}`;
    const pidFile = join(dir, "a", "serve.pid");
    const args = [
      "--data",
      join(dir, "a"),
      "--addr",
      server,
      "--registry-addr",
      `127.0.0.1:${p2}`,
      "--http-addr",
      "off",
    ];
    const started = await hh(dir, "serve", "--detach", "--pid-file", pidFile, ...args);
    expect(started.code).toBe(0);
    expect(started.stdout).toBe("");
    const pid = pidIn(pidFile);
    expect(started.stderr).toContain(`harnesshost listening addr=${server} registry=127.0.0.1:${p2} `);
    expect(started.stderr).toContain(` pid=${pid} log=${join(dir, "a", "serve.log")}`);
    expect(alive(pid)).toBe(true);

    // No wait of any kind between the two commands.
    const ran = await hh(dir, "exec", "--server", server, "--harness", "echo", "--input", "hi");
    expect(ran.code).toBe(0);
    expect(ran.stdout).toBe("echo:hi\n");

    // A second server on the same ports cannot start: --detach fails with its status and log tail.
    const clash = await hh(dir, "serve", "--detach", "--pid-file", join(dir, "b.pid"), ...args);
    expect(clash.code).not.toBe(0);
    expect(clash.stderr).toMatch(/serve exited \(\d+\) before it was listening; its log is /);
    expect(existsSync(join(dir, "b.pid"))).toBe(false);

    const stopped = await hh(dir, "stop", "--pid-file", pidFile);
    expect(stopped.code).toBe(0);
    expect(stopped.stdout).toBe(`stopped pid ${pid}\n`);
    expect(alive(pid)).toBe(false);
    expect(existsSync(pidFile)).toBe(false);
    expect(readFileSync(join(dir, "a", "serve.log"), "utf8")).toContain('"msg":"stopped"');

    // The ports are free the moment stop returned: the same ports serve again at once.
    const again = await hh(dir, "serve", "--detach", "--pid-file", pidFile, ...args);
    expect(again.code).toBe(0);
    expect((await hh(dir, "stop", "--pid-file", pidFile)).code).toBe(0);
  }, 300_000);

  it("stopIsHonestAboutWhatItFinds: no pid file is exit 3, a gone process is removed and exit 0", async () => {
    const missing = await hh(dir, "stop", "--pid-file", join(dir, "nothing.pid"));
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain("no pid file");
    const gone = spawn(process.execPath, ["-e", ""]);
    const gonePid = gone.pid ?? 0;
    await new Promise((r) => gone.once("exit", r));
    const stale = join(dir, "stale.pid");
    writeFileSync(stale, `${gonePid}\n`);
    const res = await hh(dir, "stop", "--pid-file", stale);
    expect(res.code).toBe(0);
    expect(res.stdout).toBe(`not running (pid ${gonePid}); removed ${stale}\n`);
    expect(existsSync(stale)).toBe(false);
  }, 120_000);

  it("detachedNodeIsReadyWhenTheCommandReturns: register and run a turn on it at once", async () => {
    const [p1, p2] = [await freePort(), await freePort()];
    const server = `127.0.0.1:${p1}`;
    const registry = `127.0.0.1:${p2}`;
    const serve = join(dir, "n", "serve.pid");
    const node = join(dir, "n", "node.pid");
    const sock = `unix://${join(dir, "n", "x.sock")}`;
    const args = ["--data", join(dir, "n"), "--addr", server, "--registry-addr", registry, "--http-addr", "off"];
    expect((await hh(dir, "serve", "--detach", "--pid-file", serve, ...args)).code).toBe(0);
    const started = await hh(dir, "node", "--detach", "--pid-file", node, "--harness", "echo", "--listen", sock);
    expect(started.code).toBe(0);
    expect(started.stderr).toContain(`harnesshost node listening address=${sock} pid=${pidIn(node)}`);
    const reg = await hh(
      dir,
      "harness",
      "register",
      "--server",
      registry,
      "--name",
      "mine",
      "--address",
      sock,
      "--resumability",
      "STATELESS_REPLAY",
    );
    expect(reg.code).toBe(0);
    const ran = await hh(dir, "exec", "--server", server, "--harness", "mine", "--input", "hi");
    expect(ran.stdout).toBe("echo:hi\n");
    for (const f of [node, serve]) expect((await hh(dir, "stop", "--pid-file", f)).code).toBe(0);
  }, 300_000);

  it("theBinIsTheServer: the pid a shell's $! sees is the server, and SIGTERM to it stops it cleanly", async () => {
    const [p1, p2] = [await freePort(), await freePort()];
    const pidFile = join(dir, "fg.pid");
    const child = spawn(
      process.execPath,
      [
        BIN,
        "serve",
        "--pid-file",
        pidFile,
        "--data",
        join(dir, "fg"),
        "--addr",
        `127.0.0.1:${p1}`,
        "--registry-addr",
        `127.0.0.1:${p2}`,
        "--http-addr",
        "off",
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    await new Promise<void>((resolve, reject) => {
      let text = "";
      child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
        text += chunk;
        if (text.includes("harnesshost listening")) resolve();
      });
      void exited.then((code) => reject(new Error(`serve exited ${code}: ${text}`)));
    });
    expect(pidIn(pidFile)).toBe(child.pid);
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(existsSync(pidFile)).toBe(false);
  }, 300_000);

  it("killingNpxStopsTheServer: a server under `npm exec` stops when npx is killed (npx does not pass signals on)", async () => {
    const [p1, p2] = [await freePort(), await freePort()];
    const pidFile = join(dir, "npx.pid");
    const serve = `${process.execPath} ${BIN} serve --pid-file ${pidFile} --data ${join(dir, "npx")} --addr 127.0.0.1:${p1} --registry-addr 127.0.0.1:${p2} --http-addr off`;
    // A stand-in for npm exec: named as npm names it, runs the command through `sh -c`, and dies on
    // SIGTERM without passing it on — what npm 11's npx does.
    const wrapper = `exec -a "npm exec harnesshost" ${process.execPath} -e 'require("node:child_process").spawn("sh", ["-c", process.argv[1]], { stdio: "inherit" }); setInterval(() => {}, 1000)' ${JSON.stringify(serve)}`;
    const npx = spawn("bash", ["-c", wrapper], { stdio: ["ignore", "ignore", "pipe"] });
    await new Promise<void>((resolve, reject) => {
      let text = "";
      npx.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
        text += chunk;
        if (text.includes("harnesshost listening")) resolve();
      });
      npx.once("exit", (code) => reject(new Error(`the wrapper exited ${code}: ${text}`)));
    });
    const server = pidIn(pidFile);
    expect(server).not.toBe(npx.pid);
    npx.kill("SIGTERM");
    // The server notices within WATCH_MS, drains and exits; its pid file goes with it.
    const deadline = Date.now() + 60_000;
    while (alive(server) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(alive(server)).toBe(false);
    expect(existsSync(pidFile)).toBe(false);
  }, 300_000);

  it("cliDocBackgroundExampleRunsAsWritten: docs/cli.md's block through real npx from the installed tarball", async () => {
    const work = await projectWorkdir("cli-doc");
    const block = shBlocks(readFileSync(join(REPO, "docs/cli.md"), "utf8"), "Background servers").join("\n");
    const out = await runDoc(block, work).finally(() => rmSync(work, { recursive: true, force: true }));
    expect(out).toMatch(/^echo:hi\nstopped pid \d+\n$/);
  }, 600_000);
});
