// The in-process CLI (issue: journal/controller): exec twice, replay, verify, export, fork — the
// README walkthrough, run through the real command table.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { openSqlite } from "../../src/journal/sqlite/driver.js";
import { main } from "../../src/cli/run.js";

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), "hh-cli-"));
const journal = join(dir, "journal.db");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (t) => out.push(t), err: (t) => err.push(t) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

describe("harnesshost CLI (in-process)", () => {
  let session = "";

  it("exec creates a session and prints the output; --json prints one document", async () => {
    const first = await cli("exec", "--journal", journal, "--input", "hi", "--json");
    expect(first.code).toBe(0);
    const doc = JSON.parse(first.out) as { session: string; output: string; last_seq: number };
    expect(doc.output).toBe("echo:hi");
    expect(doc.last_seq).toBe(5);
    expect(doc.session).toMatch(/^sess-[0-9a-f]{24}$/);
    session = doc.session;
    const second = await cli("exec", "--journal", journal, "--session", session, "--input", "again");
    expect(second).toMatchObject({ code: 0, out: "echo:again" });
  });

  it("replay re-executes with zero model calls and agrees with the live outputs", async () => {
    const res = await cli("replay", "--journal", journal, "--session", session, "--json");
    expect(res.code).toBe(0);
    expect(JSON.parse(res.out)).toEqual({ session, outputs: ["echo:hi", "echo:again"], model_calls: 0 });
  });

  it("verify checks every stored session and export/verify --jsonl agree", async () => {
    const v = await cli("verify", "--journal", journal);
    expect(v.code).toBe(0);
    expect(v.out).toContain(`ok ${session} 10 records`);
    const file = join(dir, "export.jsonl");
    expect((await cli("export", "--journal", journal, "--session", session, "--out", file)).code).toBe(0);
    const lines = readFileSync(file, "utf8").trim().split("\n");
    expect(lines).toHaveLength(10);
    expect(JSON.parse(lines[0]!)).toMatchObject({ seq: "1", prev_hash: "", fence: "1" });
    expect((await cli("verify", "--jsonl", file)).code).toBe(0);
    const py = await run("python3", ["test/verify_chain.py", file]);
    expect(py.stdout).toContain("ok 10 records");
    // One changed character in an event is detected and named by seq.
    writeFileSync(
      join(dir, "bad.jsonl"),
      `${lines.map((l, i) => (i === 3 ? l.replace("echo:hi", "echo:ho") : l)).join("\n")}\n`,
    );
    const bad = await cli("verify", "--jsonl", join(dir, "bad.jsonl"));
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/seq 4/);
  });

  it("verify of a tampered database names the seq and exits 1", async () => {
    const copy = join(dir, "tampered.db");
    writeFileSync(copy, readFileSync(journal));
    const db = openSqlite(copy);
    db.prepare("UPDATE events SET prev_hash = 'x' WHERE session = ? AND seq = 7").run(session);
    db.close();
    const res = await cli("verify", "--journal", copy, "--session", session);
    expect(res.code).toBe(1);
    expect(res.err).toMatch(/tampered at seq 7/);
  });

  it("fork at a historical seq creates a child whose prefix verifies and which continues on its own", async () => {
    const f = await cli("fork", "--journal", journal, "--session", session, "--at", "5", "--json");
    expect(f.code).toBe(0);
    const { children } = JSON.parse(f.out) as { children: string[] };
    expect(children).toHaveLength(1);
    const child = children[0]!;
    const turn = await cli("exec", "--journal", journal, "--session", child, "--input", "branch", "--json");
    expect(JSON.parse(turn.out)).toMatchObject({ output: "echo:branch", last_seq: 11 });
    expect((await cli("replay", "--journal", journal, "--session", child, "--json")).out).toContain(
      '"outputs":["echo:hi","echo:branch"]',
    );
    expect((await cli("verify", "--journal", journal, "--session", child)).code).toBe(0);
    const parent = JSON.parse((await cli("get", "--journal", journal, "--session", session, "--json")).out) as {
      last_seq: string;
    };
    expect(parent.last_seq).toBe("10");
  });

  it("errors go to stderr with a non-zero exit", async () => {
    expect(await cli("exec", "--journal", journal)).toMatchObject({ code: 2 });
    const missing = await cli("replay", "--journal", journal, "--session", "sess-000000000000000000000000");
    expect(missing.code).toBe(3);
    expect(missing.err).toMatch(/not found/);
    expect((await cli("fork", "--journal", journal, "--session", session, "--at", "99")).code).toBe(2);
    expect((await cli("nonsense")).code).toBe(2);
  });

  it("the bin entry runs the same CLI as a process", async () => {
    const { stdout } = await run(process.execPath, [
      "scripts/harnesshost-src.mjs",
      "exec",
      "--journal",
      journal,
      "--input",
      "proc",
      "--json",
    ]);
    expect(JSON.parse(stdout)).toMatchObject({ output: "echo:proc" });
  });
});
