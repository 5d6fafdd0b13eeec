// Group commit survives a crash mid-batch: a child process appends from many sessions in rounds (each
// round one group commit of every session's three-event appendBatch) and is SIGKILLed while batches
// are being written, three times over on the same journal. Invariant: every acknowledged record is
// present with the hash it was acknowledged with, every chain verifies, and no batch is half visible —
// every session holds the same whole number of rounds. Run on SQLite (its WAL checkpointed by the worker
// and restarted by the writer every few batches, so kills also land around checkpoints) and PostgreSQL.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openJournal } from "../../src/journal/index.js";
import { dropSchemas, freshSchema, PG_URL } from "./postgres-fixture.js";

const SESSIONS = 20;
const dirs: string[] = [];
const schemas: string[] = [];
afterAll(async () => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  await dropSchemas(schemas.splice(0));
});

interface Ack {
  readonly session: string;
  readonly seq: number;
  readonly hash: string;
}

/** Runs the writer until it has acknowledged at least `acks` appends, then SIGKILLs it. */
function runAndKill(url: string, acks: number): Promise<Ack[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "test/journal/fixtures/group-writer.ts", url, String(SESSIONS)],
      { cwd: process.cwd(), stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    let err = "";
    let killed = false;
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      if (!killed && out.split("\nack ").length - 1 >= acks) {
        killed = true;
        child.kill("SIGKILL");
      }
    });
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.on("error", reject);
    child.on("close", (code, signal) => {
      if (signal !== "SIGKILL") {
        reject(new Error(`writer exited ${code} without being killed: ${err}`));
        return;
      }
      // Only whole lines: a line cut by the kill was never completely printed.
      const lines = out.slice(0, out.lastIndexOf("\n") + 1).split("\n");
      const parsed: Ack[] = [];
      for (const line of lines) {
        const [tag, session, seq, hash] = line.split(" ");
        if (tag === "ack" && session && seq && hash) parsed.push({ session, seq: Number(seq), hash });
      }
      resolve(parsed);
    });
  });
}

async function checkAfterCrash(url: string, acked: readonly Ack[]): Promise<number> {
  const journal = await openJournal(url);
  try {
    for (const ack of acked) {
      const [record] = await journal.readRange(ack.session, ack.seq, ack.seq);
      expect(record?.contentHash, `${ack.session}@${ack.seq}`).toBe(ack.hash);
    }
    const heads = new Set<number>();
    for (let i = 0; i < SESSIONS; i++) {
      const session = `crash-${i}`;
      expect(await journal.verify(session)).toMatchObject({ ok: true });
      heads.add((await journal.head(session)).seq);
    }
    // One round is one transaction: all sessions advanced by it, or none did.
    expect([...heads]).toHaveLength(1);
    const [head] = [...heads];
    expect((head ?? 0) % 3).toBe(0);
    return head ?? 0;
  } finally {
    await journal.close();
  }
}

for (const [name, url] of [
  [
    "sqlite",
    () => {
      const dir = mkdtempSync(join(tmpdir(), "hh-group-crash-"));
      dirs.push(dir);
      return `sqlite:${join(dir, "journal.db")}`;
    },
  ],
  [
    "postgres",
    () => {
      const schema = freshSchema();
      schemas.push(schema);
      return `${PG_URL}?schema=${schema}`;
    },
  ],
] as const) {
  describe(`group commit crash: ${name}`, () => {
    it("groupCommitCrashLosesNoAcknowledgedRecord: SIGKILL mid-batch, reopen, every ack present, no partial batch", async () => {
      const journalUrl = url();
      const allAcked: Ack[] = [];
      let lastHead = 0;
      for (const acks of [SESSIONS * 3 + 7, SESSIONS * 4 + 3, SESSIONS * 2 + 11]) {
        const acked = await runAndKill(journalUrl, acks);
        expect(acked.length).toBeGreaterThanOrEqual(acks);
        allAcked.push(...acked);
        const head = await checkAfterCrash(journalUrl, allAcked);
        expect(head).toBeGreaterThan(lastHead);
        lastHead = head;
      }
    }, 120_000);
  });
}
