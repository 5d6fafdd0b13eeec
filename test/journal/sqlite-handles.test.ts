// src/journal/sqlite-driver.ts: no better-sqlite3 statement the journal makes is ever left to the garbage
// collector (on Node 24 finalizing one outside a JavaScript context aborts the process). Every
// statement prepared through better-sqlite3 in this file is watched by a FinalizationRegistry; after
// the journal has done the kinds of work that prepared per call (open and reopen read-only, pragmas,
// counts, lists, a probe, close) and the collector has run, none may have been finalized.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import BetterSqlite3 from "better-sqlite3";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { SqliteJournal } from "../../src/journal/sqlite/journal.js";
import { endEvent, inputEvent } from "./events.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

const finalized: string[] = [];
const watch = new FinalizationRegistry<string>((what) => finalized.push(what));
const prepare = BetterSqlite3.prototype.prepare;
const dir = mkdtempSync(join(tmpdir(), "hh-handles-"));

beforeAll(() => {
  BetterSqlite3.prototype.prepare = function watchedPrepare(this: BetterSqlite3.Database, source: string) {
    const stmt = prepare.call(this, source);
    watch.register(stmt, source);
    return stmt;
  } as typeof prepare;
});
afterAll(() => {
  BetterSqlite3.prototype.prepare = prepare;
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Runs the collector until the registry has reported `canary` (a statement left to it on purpose), so
 * the collector has demonstrably run far enough to finalize an unreachable statement — a fixed number
 * of rounds was not always enough on Node 24, and a late report then failed the next test.
 */
async function collectUntil(canary: string): Promise<void> {
  for (let i = 0; i < 500 && !finalized.includes(canary); i += 1) {
    gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Prepares `source` on `db` and leaves the statement to the collector. */
function leave(db: BetterSqlite3.Database, source: string): void {
  db.prepare(source).get();
}

beforeEach(() => {
  finalized.length = 0;
});

describe("sqlite handles", () => {
  it("theWatchSeesAStatementLeftToTheCollector (so the next test can fail)", async () => {
    const raw = new BetterSqlite3(":memory:");
    leave(raw, "SELECT 41");
    await collectUntil("SELECT 41");
    raw.close();
    expect(finalized).toContain("SELECT 41");
  });

  it("noSqliteStatementTheJournalMakesIsEverCollected", async () => {
    const path = join(dir, "journal.db");
    await (async () => {
      const journal = SqliteJournal.open(path);
      for (const uid of ["h-1", "h-2"]) {
        await journal.createSession({ uid, project: "default", harness: "echo" });
        await journal.append(uid, 0, 0, inputEvent("hi"));
        await journal.append(uid, 1, 0, endEvent());
      }
      await journal.countByComputeState();
      await journal.countByComputeState();
      await journal.listSessions({ project: "default", pageSize: 1, pageToken: "", harness: "echo" });
      await journal.probe();
      await journal.close();
      const reader = SqliteJournal.open(path, { readOnly: true });
      await reader.verify("h-1");
      await reader.close();
    })();
    // Left after the journal's work: once the collector has finalized it, it has had its chance at
    // anything the journal left unreachable before it.
    const raw = new BetterSqlite3(":memory:");
    leave(raw, "SELECT 42");
    await collectUntil("SELECT 42");
    raw.close();
    expect(finalized).toContain("SELECT 42");
    expect(finalized.filter((what) => what !== "SELECT 42")).toEqual([]);
  });
});
