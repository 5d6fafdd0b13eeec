// Record frames of an Exec stream are encoded around the event bytes the journal stored at the append
// (no second encoding of the event). Invariants: such a frame is byte for byte what protobuf-es writes
// for the same ExecUpdate — whether the stored bytes were still kept or the event is encoded afresh, and
// for a record whose proto3 fields are all zero; the kept encodings are bounded in count and bytes.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create, toBinary } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventKind, EventSchema, type Event } from "../../src/gen/agentsessions/v1/common_pb.js";
import { ExecUpdateSchema } from "../../src/gen/agentsessions/v1/session_pb.js";
import { Host } from "../../src/host/index.js";
import { openJournal } from "../../src/journal/index.js";
import type { JournalRecord } from "../../src/journal/types.js";
import { textMessage } from "../../src/model/text.js";
import { logRecordOf, recordUpdate } from "../../src/server/record-proto.js";
import {
  appendedEncoding,
  keptEncodings,
  noteAppendedEncoding,
  RECENT_BYTES,
  RECENT_EVENTS,
} from "../../src/wire/event-bytes.js";
import { encodeMessage } from "../../src/wire/service.js";

let dir: string;
let host: Host;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "hh-encoded-frames-"));
  host = await Host.open({ dataDir: dir }, { journal: await openJournal(join(dir, "journal.db")) });
});
afterAll(async () => {
  await host?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** What protobuf-es writes for the record's ExecUpdate, built the ordinary way. */
const reference = (rec: JournalRecord): Buffer =>
  Buffer.from(toBinary(ExecUpdateSchema, create(ExecUpdateSchema, { update: { case: "record", value: logRecordOf(rec) } })));

/** One echo turn's records, as its observer saw them right after each commit. */
async function turnRecords(): Promise<JournalRecord[]> {
  const session = (await host.createSession({ harness: "echo" })).uid;
  const seen: JournalRecord[] = [];
  await host.placer.exec({
    session,
    inputs: [textMessage("user", "hello")],
    signal: new AbortController().signal,
    observer: { onRecord: (rec) => void seen.push(rec), onDelta: () => undefined },
  });
  return seen;
}

describe("encoded record frames", () => {
  it("aRecordFrameIsExactlyWhatProtobufEsWritesFromTheStoredBytesAndAfresh", async () => {
    const records = await turnRecords();
    expect(records.map((r) => r.event.kind)).toContain(EventKind.EVENT_OUTPUT);
    for (const rec of records) {
      const expected = reference(rec);
      // First frame: the append's kept bytes; second: nothing kept any more, the event encoded now.
      expect(encodeMessage(ExecUpdateSchema, recordUpdate(rec))).toEqual(expected);
      expect(encodeMessage(ExecUpdateSchema, recordUpdate(rec))).toEqual(expected);
    }
  });

  it("aRecordFrameWithEveryProto3FieldZeroMatchesProtobufEs", () => {
    const rec: JournalRecord = { seq: 0, prevHash: "", contentHash: "", fence: 0, event: create(EventSchema) };
    expect(encodeMessage(ExecUpdateSchema, recordUpdate(rec))).toEqual(reference(rec));
  });

  it("keptEncodingsAreBoundedInCountAndBytesAndALargeOneIsNotKept", () => {
    const events: Event[] = [];
    for (let i = 0; i < RECENT_EVENTS * 2; i++) {
      const ev = create(EventSchema, { executionId: `exec-${i}` });
      events.push(ev);
      noteAppendedEncoding(ev, toBinary(EventSchema, ev));
    }
    expect(keptEncodings().events).toBeLessThanOrEqual(RECENT_EVENTS);
    expect(keptEncodings().bytes).toBeLessThanOrEqual(RECENT_BYTES);
    const big = create(EventSchema, { executionId: "x".repeat(RECENT_BYTES / 2) });
    const before = keptEncodings();
    noteAppendedEncoding(big, toBinary(EventSchema, big));
    expect(keptEncodings()).toEqual(before);
    // The oldest went first; the newest is still kept and taken once.
    const newest = events.at(-1) as Event;
    expect(appendedEncoding(newest)).toEqual(toBinary(EventSchema, newest));
    expect(keptEncodings().events).toBe(before.events - 1);
  });
});
