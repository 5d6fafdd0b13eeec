// The sessions a backfill test writes before it strips a journal's pin columns, and what every backend
// must answer once it reopened and backfilled them: one fixture, so the SQLite and PostgreSQL upgrade
// tests check the same pins.
import { expect } from "vitest";
import type { Journal } from "../../src/journal/types.js";
import { endEvent, executionStartEvent, inputEvent, upgradeRecordEvent } from "./events.js";
import { created } from "./sessions.js";

/** a: pinned to ver 1 by its turn; b: upgraded to ver 2; c: no turn, no pin. */
export async function writePinnedSessions(writer: Journal): Promise<void> {
  await created(writer, "a", "b", "c");
  await writer.appendBatch("a", 0, 0, [executionStartEvent("ver", "1", "x1"), endEvent("x1")]);
  await writer.appendBatch("b", 0, 0, [executionStartEvent("ver", "1", "x2"), upgradeRecordEvent("ver", "1", "2")]);
  await writer.append("c", 0, 0, inputEvent("no turn"));
}

/** The pins writePinnedSessions left, as the reopened journal must report them. */
export async function expectPinsBackfilled(journal: Journal): Promise<void> {
  expect(await journal.pinnedSessions("ver")).toEqual([
    { uid: "a", version: "1", digest: "" },
    { uid: "b", version: "2", digest: "" },
  ]);
  expect((await journal.getSession("b"))?.pin).toEqual({ harness: "ver", version: "2", digest: "", seq: 2 });
  expect((await journal.getSession("c"))?.pin).toBeUndefined();
}
