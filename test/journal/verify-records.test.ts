// Journal.verify's onRecord (src/journal/types.ts): every backend hands each record to the caller, decoded,
// in seq order, once its link and hash checked out — the same records readRange returns, fences
// included — and a walk that finds damage hands on nothing past the last good record.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { equals } from "@bufbuild/protobuf";
import { afterAll, describe, expect, it } from "vitest";
import { EventSchema } from "../../src/gen/agentsessions/v1/common_pb.js";
import { verifyChain } from "../../src/journal/chain.js";
import { MemoryJournal } from "../../src/journal/memory/journal.js";
import { PostgresJournal } from "../../src/journal/postgres/journal.js";
import { SqliteJournal } from "../../src/journal/sqlite/journal.js";
import type { Journal, JournalRecord } from "../../src/journal/types.js";
import { inputEvent, outputEvent } from "./events.js";
import { PG_URL, dropSchemas, freshSchema } from "./postgres-fixture.js";
import { created } from "./sessions.js";

const dir = mkdtempSync(join(tmpdir(), "hh-verify-records-"));
const schemas: string[] = [];
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await dropSchemas(schemas);
});

const backends: [string, () => Promise<Journal>][] = [
  ["memory", async () => new MemoryJournal()],
  ["sqlite", async () => SqliteJournal.open(join(dir, `${Math.random().toString(36).slice(2)}.db`))],
  [
    "postgres",
    async () => {
      const schema = freshSchema();
      schemas.push(schema);
      return PostgresJournal.open(PG_URL, { schema, poolSize: 2 });
    },
  ],
];

describe.each(backends)("%s journal", (_name, open) => {
  it("verifyHandsOnEveryRecordDecodedInOrderAsReadRangeReturnsIt", async () => {
    const journal = await created(await open(), "s");
    try {
      await journal.appendBatch("s", 0, 0, [inputEvent("a"), outputEvent("b")]);
      const fence = await journal.newFence("s");
      await journal.appendBatch("s", 2, fence, [inputEvent("c")]);
      const seen: JournalRecord[] = [];
      const result = await journal.verify("s", (r) => seen.push(r));
      expect(result).toMatchObject({ ok: true, records: 3 });
      const stored = await journal.readRange("s", 1, 3);
      expect(seen.map((r) => [r.seq, r.prevHash, r.contentHash, r.fence])).toEqual(
        stored.map((r) => [r.seq, r.prevHash, r.contentHash, r.fence]),
      );
      for (const [i, r] of seen.entries()) expect(equals(EventSchema, r.event, stored[i]!.event)).toBe(true);
      expect(seen[2]?.fence).toBe(fence);
    } finally {
      await journal.close();
    }
  });
});

it("aWalkThatFindsDamageHandsOnNothingPastTheLastGoodRecord", async () => {
  const journal = await created(new MemoryJournal(), "s");
  await journal.appendBatch("s", 0, 0, [inputEvent("a"), inputEvent("b"), inputEvent("c")]);
  // The stored records as a backend hands them to verifyChain, seq 2's content hash damaged.
  const good = await journal.readRange("s", 1, 3);
  const stored = good.map((r, i) => ({
    seq: r.seq,
    prevHash: r.prevHash,
    contentHash: i === 1 ? "0".repeat(64) : r.contentHash,
    fence: r.fence,
    decode: () => r.event,
  }));
  const seen: number[] = [];
  const result = await verifyChain("s", stored, { seq: 3, hash: good[2]!.contentHash }, (r) => seen.push(r.seq));
  expect(result).toMatchObject({ ok: false, kind: "tampered", seq: 2 });
  expect(seen).toEqual([1]);
});
