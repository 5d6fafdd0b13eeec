// src/journal/sqlite/driver.ts: no better-sqlite3 statement the journal makes is ever left to the garbage
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
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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

/** Runs the collector until the registry's callbacks have had their turn. */
async function collect(): Promise<void> {
  for (let i = 0; i < 4; i += 1) {
    gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe("sqlite handles", () => {
  it("theWatchSeesAStatementLeftToTheCollector (so the next test can fail)", async () => {
    const raw = new BetterSqlite3(":memory:");
    (() => {
      raw.prepare("SELECT 41").get();
    })();
    await collect();
    raw.close();
    expect(finalized).toContain("SELECT 41");
    finalized.length = 0;
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
    await collect();
    expect(finalized).toEqual([]);
  });
});
