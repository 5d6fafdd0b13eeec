// A corrupt journal page: `verify` names the session and the first unreadable
// seq, a Sessions call that hits the page fails DATA_LOSS (not INTERNAL), and from then on health says
// NOT_SERVING — and SERVING again once the pages are repaired (the unreadable journal is probed).
// A real SQLite file, corrupted by overwriting pages in its middle.
import { closeSync, mkdtempSync, openSync, readSync, rmSync, statSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli/run.js";
import { Sessions } from "../../src/gen/agentsessions/v1/session_pb.js";
import { Host } from "../../src/host/host.js";
import { SqliteJournal } from "../../src/journal/sqlite/journal.js";
import { startServer, type RunningServer } from "../../src/server/server.js";
import { createClient } from "../../src/wire/index.js";
import { inputEvent } from "../journal/events.js";
import { drain, type SessionsClient } from "../server/helpers.js";
import { healthStatus } from "./hostile-helpers.js";

const QUIET = { debug() {}, info() {}, warn() {}, error() {} };
const SESSIONS = ["s-a", "s-b", "s-c", "s-d", "s-e"];
let dir = "";
let path = "";
let host: Host;
let server: RunningServer;
let client: SessionsClient;
/** The overwritten pages' original bytes, by offset. */
const original = new Map<number, Buffer>();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "hh-corrupt-"));
  path = join(dir, "journal.db");
  const j = SqliteJournal.open(path);
  for (const s of SESSIONS) {
    await j.createSession({ uid: s, project: "default", harness: "echo" });
    for (let i = 0; i < 200; i++) await j.append(s, i, 0, inputEvent("x".repeat(500)));
  }
  await j.close();
  const pages = Math.floor(statSync(path).size / 4096);
  const fd = openSync(path, "r+");
  for (let p = Math.floor(pages / 2); p < Math.floor(pages / 2) + 3; p++) {
    const page = Buffer.alloc(4096);
    readSync(fd, page, 0, 4096, p * 4096);
    original.set(p * 4096, page);
    writeSync(fd, Buffer.alloc(4096, 0x5a), 0, 4096, p * 4096);
  }
  closeSync(fd);
  host = await Host.open({ dataDir: dir, nodeIdleMs: 0 });
  server = await startServer(host, {
    addr: "127.0.0.1:0",
    registryAddr: "127.0.0.1:0",
    logger: QUIET,
    journalProbeMs: 20,
  });
  client = createClient(Sessions, server.addr);
});

afterAll(async () => {
  client?.close();
  await server?.close(500);
  await host?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("corrupt journal page", () => {
  it("verifyNamesTheSessionAndSeqOfACorruptPage", async () => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(["verify", "--journal", path], {
      out: (t) => void out.push(t),
      err: (t) => void err.push(t),
    });
    expect(code).toBe(1);
    const failures = err.filter((l) => /^FAIL s-[a-e] unreadable at seq \d+: /.test(l));
    expect(failures.length, err.join("\n")).toBeGreaterThan(0);
    expect(out.at(-1)).toMatch(/^\d\/5 sessions intact$/);
  });

  it("healthSaysNotServingOnceTheJournalIsUnreadable", async () => {
    expect(await healthStatus(server.addr)).toBe("SERVING");
    const codes: number[] = [];
    for (const s of SESSIONS) {
      const { error } = await drain(client.replay({ session: s }));
      codes.push(error?.grpcCode ?? status.OK);
    }
    expect(codes).toContain(status.DATA_LOSS);
    expect(codes).not.toContain(status.INTERNAL);
    expect(await healthStatus(server.addr)).toBe("NOT_SERVING");
    expect(await healthStatus(server.addr, 1000, "agentsessions.v1.Sessions")).toBe("NOT_SERVING");
  });

  it("healthReturnsToServingOnceTheJournalIsReadableAgain", async () => {
    expect(await healthStatus(server.addr)).toBe("NOT_SERVING");
    const fd = openSync(path, "r+");
    for (const [offset, page] of original) writeSync(fd, page, 0, page.length, offset);
    closeSync(fd);
    const deadline = Date.now() + 30_000;
    let seen = await healthStatus(server.addr);
    while (seen !== "SERVING" && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
      seen = await healthStatus(server.addr);
    }
    expect(seen).toBe("SERVING");
    expect(await healthStatus(server.addr, 1000, "agentsessions.v1.Sessions")).toBe("SERVING");
    for (const s of SESSIONS) {
      const { error } = await drain(client.replay({ session: s }));
      expect(error?.grpcCode ?? status.OK, s).toBe(status.OK);
    }
  });
});
