// storage_per_turn_ratio (issue 23 item 2): what the SQLite journal's file pays per byte a turn must
// keep. Echo turns through placement (in-process Host, SQLite on disk) alternate between a session
// with 10,000 prior events and one with 10, and the journal's pages in use (page_count −
// freelist_count, read through the WAL) are compared before and after all of them. The denominator is
// the bytes of the records the turns appended as the journal serves them: each record's binary wire
// form, the protocol's LogRecord (seq, prev_hash, content_hash, fence, event) encoded with protobuf —
// what ReadLog/Replay send and what a client re-verifies. details also divide the growth by the JSONL
// export lines, by the record content at its minimum (event + two 32-byte hashes + 8-byte seq and
// fence) and by the encoded events alone. Invariant: enough turns that the page granularity (4 KiB,
// ±1 page at each end) moves the ratio by well under 1%, and both sessions' turns append records of
// the same size (details.longOverShortTurnBytes ≈ 1: a long history is not stored again).
import { toBinary } from "@bufbuild/protobuf";
import Database from "better-sqlite3";
import { LogRecordSchema } from "../../src/gen/agentsessions/v1/common_pb.js";
import { jsonlLine } from "../../src/journal/transfer/export.js";
import type { JournalRecord } from "../../src/journal/types.js";
import { logRecordOf } from "../../src/server/record-proto.js";
import { eventBytes } from "../../src/wire/event-bytes.js";
import { openEchoHost } from "../lib/echo-host.js";
import { promptText } from "../lib/echo-turns.js";
import { buildLongSession } from "../lib/long-build.js";
import { round } from "../lib/stats.js";
import { scratchDir } from "../lib/tmp.js";
import type { Figure, FigureResult, RunOptions } from "../lib/types.js";

/** Bytes of the journal's pages in use (page_count − freelist_count), read through the WAL. */
export function usedBytes(dbPath: string): number {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    const pages = db.pragma("page_count", { simple: true }) as number;
    const free = db.pragma("freelist_count", { simple: true }) as number;
    const size = db.pragma("page_size", { simple: true }) as number;
    return (pages - free) * size;
  } finally {
    db.close();
  }
}

/** The sizes one record is measured by (see the module comment). */
export interface RecordSizes {
  wire: number;
  jsonl: number;
  content: number;
  event: number;
  records: number;
}

const HASH_BYTES = 32;
const encoder = new TextEncoder();

export function emptySizes(): RecordSizes {
  return { wire: 0, jsonl: 0, content: 0, event: 0, records: 0 };
}

export function addRecordSizes(into: RecordSizes, records: readonly JournalRecord[]): void {
  for (const r of records) {
    const e = eventBytes(r.event);
    into.wire += toBinary(LogRecordSchema, logRecordOf(r)).byteLength;
    into.jsonl += encoder.encode(jsonlLine(r)).byteLength + 1;
    into.content += e + (r.prevHash === "" ? 0 : HASH_BYTES) + HASH_BYTES + 16;
    into.event += e;
    into.records += 1;
  }
}

export const storagePerTurn: Figure = {
  key: "storage_per_turn_ratio",
  title: "journal pages in use per byte of the records a turn appends (SQLite, echo turns)",
  timeoutMs: { quick: 60_000, full: 900_000 },
  async run(opts: RunOptions): Promise<FigureResult> {
    const longEvents = opts.quick ? 1_000 : 10_000;
    const shortEvents = 10;
    const turnsEach = opts.quick ? 20 : 250;
    const dir = scratchDir("storage");
    const dbPath = dir.file("journal.db");
    try {
      const host = await openEchoHost(dir.path, "local", dbPath);
      let before: number;
      let grown: number;
      const added = emptySizes();
      const perSession = { long: emptySizes(), short: emptySizes() };
      try {
        const short = await host.newSession();
        await buildLongSession(host.journal, short, shortEvents);
        const long = await host.newSession();
        await buildLongSession(host.journal, long, longEvents);
        // One warm-up turn each: the head rows and the sessions' first pages after the build.
        await host.turn(long, promptText(0));
        await host.turn(short, promptText(0));
        before = usedBytes(dbPath);
        for (let i = 1; i <= turnsEach; i++) {
          for (const [session, which] of [
            [long, "long"],
            [short, "short"],
          ] as const) {
            const text = promptText(i);
            const result = await host.turn(session, text);
            if (result.outputs[0] !== `echo:${text}`) {
              throw new Error(`echo turn answered ${JSON.stringify(result.outputs[0])}`);
            }
            addRecordSizes(added, result.records);
            addRecordSizes(perSession[which], result.records);
          }
        }
        grown = usedBytes(dbPath) - before;
      } finally {
        await host.close();
      }
      const turns = 2 * turnsEach;
      const ratio = grown / added.wire;
      return {
        status: "ok",
        value: round(ratio),
        unit: "×",
        measured: { median: round(grown / turns), n: turns, unit: "B/turn" },
        baseline: {
          median: round(added.wire / turns),
          n: turns,
          unit: "B/turn",
          what: "the turn's records as protobuf LogRecords (the wire form ReadLog/Replay serve)",
        },
        ratio: round(ratio),
        target: { op: "<=", value: 1.2 },
        details: {
          turns,
          recordsAdded: added.records,
          priorEventsLong: longEvents,
          priorEventsShort: shortEvents,
          usedBytesGrowth: grown,
          wireBytesAdded: added.wire,
          jsonlBytesAdded: added.jsonl,
          contentBytesAdded: added.content,
          eventBytesAdded: added.event,
          overJsonlBytes: round(grown / added.jsonl),
          overContentBytes: round(grown / added.content),
          overEventBytes: round(grown / added.event),
          storedBytesPerRecord: round(grown / added.records),
          longOverShortTurnBytes: round(perSession.long.wire / perSession.short.wire),
          pageResolution: round(4096 / grown),
          measure: "(page_count − freelist_count) × page_size before and after the turns",
        },
      };
    } finally {
      dir.dispose();
    }
  },
};
