// The README's walkthroughs are executed as written (with ports, paths and `npx harnesshost` pointed
// at this checkout), so the commands a newcomer copies keep working.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const repo = resolve(import.meta.dirname, "../..");
const readme = readFileSync(join(repo, "README.md"), "utf8");
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** The ```sh blocks under a heading that starts with `title`. */
function blocks(title: string): string[] {
  const start = readme.indexOf(`## ${title}`);
  if (start < 0) throw new Error(`README has no section "${title}"`);
  const end = readme.indexOf("\n## ", start + 3);
  const section = readme.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const addr = s.address();
      s.close(() => (typeof addr === "object" && addr ? res(addr.port) : rej(new Error("no port"))));
    });
  });
}

/** Points a README script at this checkout and waits (polling, bounded) for backgrounded services. */
async function localize(script: string, dir: string): Promise<string> {
  const [p1, p2] = [await freePort(), await freePort()];
  const bin = `node ${join(repo, "bin/harnesshost.js")}`;
  const lines = script
    .replaceAll("npx harnesshost serve", `${bin} serve --addr 127.0.0.1:${p1} --registry-addr 127.0.0.1:${p2}`)
    .replaceAll("npx harnesshost", bin)
    .replaceAll("127.0.0.1:7233", `127.0.0.1:${p1}`)
    .replaceAll("127.0.0.1:7234", `127.0.0.1:${p2}`)
    .replaceAll("/tmp/x.sock", join(dir, "x.sock"))
    .replaceAll("test/verify_chain.py", join(repo, "test/verify_chain.py"))
    .split("\n");
  const out: string[] = ["set -euo pipefail", "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT"];
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i]!;
    while (line.endsWith("\\")) line = line.slice(0, -1) + " " + (lines[++i] ?? "");
    out.push(line);
    if (/\s&\s*$/.test(line)) {
      const sock = /--listen unix:\/\/(\S+)/.exec(line)?.[1];
      const check = sock ? `test -S ${sock}` : `node -e "require('net').connect(${p1},'127.0.0.1').on('connect',()=>process.exit(0)).on('error',()=>process.exit(1))"`;
      out.push(`for i in $(seq 1 300); do ${check} && break; sleep 0.2; done; ${check}`);
    }
  }
  return out.join("\n");
}

async function bash(script: string, cwd: string): Promise<string> {
  const { stdout } = await run("bash", ["-c", script], { cwd, maxBuffer: 16 << 20, timeout: 300_000 });
  return stdout;
}

describe("README walkthroughs", () => {
  it("walkthrough 1 runs in-process: exec, replay, verify, export, fork", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hh-readme-"));
    dirs.push(dir);
    const out = await bash(await localize(blocks("Walkthrough 1").join("\n"), dir), dir);
    expect(out).toContain("echo:again\necho:hi\necho:again\n");
    expect(out).toMatch(/ok sess-[0-9a-f]{24} 10 records/);
    expect(out).toMatch(/ok 10 records/);
    expect(out).toMatch(/\{"children":\["sess-[0-9a-f]{24}"\]\}/);
  });

  it("walkthroughs 2, 3 and 4 run against a served host: a registered node, counter tiers, approvals", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hh-readme-"));
    dirs.push(dir);
    const script = [...blocks("Walkthrough 2"), ...blocks("Walkthrough 3"), ...blocks("Walkthrough 4")].join("\n");
    const out = await bash(await localize(script, dir), dir);
    const lines = out.split("\n");
    expect(lines).toContain("echo:hi");
    expect(out).toMatch(/ok sess-[0-9a-f]{24}/);
    const counts = lines.filter((l) => /^\d+$/.test(l));
    expect(counts).toEqual(["2", "3", "4"]);
    expect(out).toMatch(/snapshot memory=true digest=sha256:[0-9a-f]{64}/);
    expect(lines.filter((l) => /^sess-[0-9a-f]{24}$/.test(l))).toHaveLength(3);
    // Walkthrough 4: park, zero-step resume, approve, resume once; deny; the same for `ask`.
    expect(lines.filter((l) => / exec=AWAITING pending_approval=[0-9a-f]{16}\/w1@4$/.test(l))).toHaveLength(2);
    expect(out).toMatch(/^approved [0-9a-f]{16}\/w1 request_seq=4 decision_seq=6; run resume/m);
    expect(lines).toContain("1 approved");
    expect(lines.filter((l) => l.startsWith("awaiting approval: execution="))).toHaveLength(1);
    expect(lines).toContain("2 denied");
    expect(lines).toContain("demo.write ran 1 time(s)");
    expect(lines).toContain("receipt: approved");
    expect(lines.filter((l) => l.startsWith("ok "))).toHaveLength(4);
  }, 320_000);
});
