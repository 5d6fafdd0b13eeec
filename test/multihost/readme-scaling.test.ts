// The README's "## Scaling" walkthrough runs as written: its sh blocks, with `npx harnesshost` pointed
// at this checkout, free ports for 7233–7236, a temp socket path and a fresh PostgreSQL schema in the
// journal URL; backgrounded services are awaited by polling their ports (bounded).
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { dropSchemas } from "../journal/postgres-fixture.js";
import { journalUrl, mhSchema } from "./cluster.js";

const run = promisify(execFile);
const repo = resolve(import.meta.dirname, "../..");
const README_PG_URL = "postgres://postgres@127.0.0.1:5432/test";
const dirs: string[] = [];
const schemas: string[] = [];
afterAll(async () => {
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
  await dropSchemas(schemas);
});

/** The ```sh blocks of the README section whose heading is exactly `## title`. */
function blocks(title: string): string[] {
  const readme = readFileSync(join(repo, "README.md"), "utf8");
  const start = readme.indexOf(`\n## ${title}\n`);
  if (start < 0) throw new Error(`README has no section "${title}"`);
  const end = readme.indexOf("\n## ", start + 4);
  return [...readme.slice(start, end < 0 ? undefined : end).matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
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

function portCheck(port: string): string {
  return `node -e "require('net').connect(${port},'127.0.0.1').on('connect',()=>process.exit(0)).on('error',()=>process.exit(1))"`;
}

/** Points the script at this checkout, fresh ports, a temp dir and `schema`; awaits background jobs. */
async function localize(script: string, dir: string, schema: string): Promise<string> {
  let text = script
    .replaceAll("npx harnesshost", `node ${join(repo, "bin/harnesshost.js")}`)
    .replaceAll(README_PG_URL, `'${journalUrl(schema)}'`)
    .replaceAll("/tmp/x.sock", join(dir, "x.sock"));
  for (const port of ["7233", "7234", "7235", "7236"]) text = text.replaceAll(`127.0.0.1:${port}`, `127.0.0.1:${await freePort()}`);
  const lines = text.split("\n");
  const out = ["set -euo pipefail", "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT"];
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i]!;
    while (line.endsWith("\\")) line = line.slice(0, -1) + " " + (lines[++i] ?? "");
    out.push(line);
    if (!/\s&\s*$/.test(line)) continue;
    const sock = /--listen unix:\/\/(\S+)/.exec(line)?.[1];
    const ports = [...line.matchAll(/--(?:registry-)?addr 127\.0\.0\.1:(\d+)/g)].map((m) => m[1]!);
    const checks = sock ? [`test -S ${sock}`] : ports.map(portCheck);
    for (const check of checks) out.push(`for i in $(seq 1 600); do ${check} && break; sleep 0.2; done; ${check}`);
  }
  return out.join("\n");
}

describe("README scaling walkthrough", () => {
  it("two hosts on one database serve one echo and one counter session alternately, and a harness registered on A through B", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hh-mh-readme-"));
    dirs.push(dir);
    const schema = mhSchema();
    schemas.push(schema);
    const script = await localize(blocks("Scaling").join("\n"), dir, schema);
    const { stdout } = await run("bash", ["-c", script], { cwd: dir, maxBuffer: 16 << 20, timeout: 240_000 });
    const lines = stdout.split("\n");
    expect(lines.slice(0, 5)).toEqual(["echo:two", "echo:three", "echo:one", "echo:two", "echo:three"]);
    expect(lines.filter((l) => /^\d+$/.test(l))).toEqual(["2", "3", "4"]);
    expect(stdout).toMatch(/snapshot memory=true digest=sha256:[0-9a-f]{64}/);
    expect(stdout).toMatch(/ok sess-[0-9a-f]{24}/);
    expect(lines).toContain("echo:hi");
  }, 240_000);
});
