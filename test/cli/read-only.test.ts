// Read-only commands on a read-only data directory: after a host stopped
// cleanly, and after an unclean shutdown that left WAL frames (with its -shm, and without one),
// `verify`, `replay`, `export`, `get` and `list` run with a user who cannot write the data directory or
// the journal file (as root, the commands run as uid 65534 through setpriv: chmod does not stop root),
// read every committed record, and change no file there (names, sizes and mtimes compared).
import { execFile } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli/run.js";
import { SqliteJournal } from "../../src/journal/sqlite/journal.js";
import { inputEvent } from "../journal/events.js";

const run = promisify(execFile);
const SRC_BIN = resolve(import.meta.dirname, "../../bin/harnesshost.js");
let dir = "";
let session = "";
/** Copies of the data directory as an unclean shutdown leaves it: WAL frames with and without a -shm. */
let withShm = "";
let withoutShm = "";
/** A session whose records exist only as WAL frames in withShm and withoutShm. */
const WAL_SESSION = "s-only-in-the-wal";

/** Runs the CLI as a user without write access to `dir` (uid 65534 when this process is root). */
async function asReader(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const root = process.getuid?.() === 0;
  const [cmd, args] = root
    ? ["setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, SRC_BIN, ...argv]]
    : [process.execPath, [SRC_BIN, ...argv]];
  try {
    const { stdout, stderr } = await run(cmd, args as string[], { timeout: 120_000 });
    return { code: 0, out: stdout, err: stderr };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof err.code === "number" ? err.code : 1, out: err.stdout ?? "", err: err.stderr ?? "" };
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "hh-readonly-"));
  const out: string[] = [];
  const code = await main(["exec", "--data", dir, "--input", "hi", "--json"], {
    out: (t) => void out.push(t),
    err: () => undefined,
  });
  expect(code).toBe(0);
  session = (JSON.parse(out[0] ?? "{}") as { session: string }).session;
  // A cleanly closed host leaves no WAL frames behind.
  expect(existsSync(join(dir, "journal.db-wal"))).toBe(false);
  // An unclean shutdown: a session written while the journal is open, its files copied before any
  // checkpoint (the WAL frames hold the session), as a killed host would leave them.
  const open = SqliteJournal.open(join(dir, "journal.db"));
  await open.createSession({ uid: WAL_SESSION, project: "default", harness: "echo" });
  for (let i = 0; i < 3; i++) await open.append(WAL_SESSION, i, 0, inputEvent(`frame ${i}`));
  withShm = `${dir}-with-shm`;
  withoutShm = `${dir}-without-shm`;
  for (const [to, files] of [
    [withShm, ["journal.db", "journal.db-wal", "journal.db-shm"]],
    [withoutShm, ["journal.db", "journal.db-wal"]],
  ] as const) {
    mkdirSync(to);
    for (const f of files) copyFileSync(join(dir, f), join(to, f));
  }
  await open.close();
  for (const d of [dir, withShm, withoutShm]) {
    for (const f of readdirSync(d)) chmodSync(join(d, f), 0o444);
    chmodSync(d, 0o555);
  }
}, 120_000);

afterAll(() => {
  for (const d of [dir, withShm, withoutShm]) {
    if (d === "" || !existsSync(d)) continue;
    chmodSync(d, 0o755);
    rmSync(d, { recursive: true, force: true });
  }
});

/** Every file of `d` with its size and mtime: what a read must leave as it was. */
function listing(d: string): string[] {
  return readdirSync(d).map((f) => {
    const st = statSync(join(d, f));
    return `${f} ${st.size} ${st.mtimeMs}`;
  });
}

describe("read-only data directory", () => {
  it("readOnlyCommandsWorkOnAReadOnlyDataDirectory", async () => {
    const verify = await asReader("verify", "--data", dir);
    expect(verify.err).toBe("");
    expect(verify.code).toBe(0);
    expect(verify.out).toContain(`ok ${session} 5 records`);
    const replay = await asReader("replay", "--data", dir, "--session", session);
    expect(replay.code, replay.err).toBe(0);
    expect(replay.out.trim()).toBe("echo:hi");
    const exported = await asReader("export", "--data", dir, "--session", session);
    expect(exported.code, exported.err).toBe(0);
    expect(exported.out.trim().split("\n")).toHaveLength(5);
    const get = await asReader("get", "--data", dir, "--session", session, "--json");
    expect(get.code, get.err).toBe(0);
    expect(get.out).toContain(session);
    const list = await asReader("list", "--data", dir);
    expect(list.code, list.err).toBe(0);
    expect(list.out).toContain(session);
    expect(readdirSync(dir)).toEqual(["journal.db"]);
  }, 300_000);

  for (const [name, data] of [
    ["with its -shm", () => withShm],
    ["without a -shm", () => withoutShm],
  ] as const) {
    it(`readOnlyCommandsReadTheWalFramesAnUncleanShutdownLeft (${name})`, async () => {
      const d = data();
      const before = listing(d);
      const verify = await asReader("verify", "--data", d);
      expect(verify.code, verify.err).toBe(0);
      expect(verify.out).toContain(`ok ${session} 5 records`);
      expect(verify.out).toContain(`ok ${WAL_SESSION} 3 records`);
      const list = await asReader("list", "--data", d);
      expect(list.code, list.err).toBe(0);
      expect(list.out).toContain(WAL_SESSION);
      const get = await asReader("get", "--data", d, "--session", WAL_SESSION, "--json");
      expect(get.code, get.err).toBe(0);
      expect(get.out).toContain(WAL_SESSION);
      const exported = await asReader("export", "--data", d, "--session", WAL_SESSION);
      expect(exported.code, exported.err).toBe(0);
      expect(exported.out.trim().split("\n")).toHaveLength(3);
      const replay = await asReader("replay", "--data", d, "--session", session);
      expect(replay.code, replay.err).toBe(0);
      expect(replay.out.trim()).toBe("echo:hi");
      expect(listing(d)).toEqual(before);
    }, 300_000);
  }

  it("a write on a read-only data directory fails with a clear error", async () => {
    const exec = await asReader("exec", "--data", dir, "--session", session, "--input", "more");
    expect(exec.code).toBe(1);
    expect(exec.err).toMatch(/readonly|read-only/i);
  }, 120_000);
});
