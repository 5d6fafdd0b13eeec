// Journal records and turn updates as wire messages. Invariants: a LogRecord on the wire carries the
// stored seq, hashes, fence and event unchanged, so a client can re-verify the chain byte for byte; a
// record frame's encoding, made here around the event's stored bytes, is exactly protobuf-es binary of
// the same ExecUpdate.
import { create } from "@bufbuild/protobuf";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { appendedEncoding } from "../wire/event-bytes.js";
import { withEncoding } from "../wire/service.js";
import { LogRecordSchema, type LogRecord } from "../gen/agentsessions/v1/common_pb.js";
import { ExecUpdateSchema, type ExecUpdate, type Session } from "../gen/agentsessions/v1/session_pb.js";
import type { JournalRecord } from "../journal/types.js";

export function logRecordOf(rec: JournalRecord): LogRecord {
  return create(LogRecordSchema, {
    seq: BigInt(rec.seq),
    prevHash: rec.prevHash,
    contentHash: rec.contentHash,
    fence: BigInt(rec.fence),
    event: rec.event,
  });
}

export function sessionUpdate(session: Session): ExecUpdate {
  return create(ExecUpdateSchema, { update: { case: "session", value: session } });
}

/** A record frame, its encoding made around the event's bytes as the journal stored them (no re-encoding). */
export function recordUpdate(rec: JournalRecord): ExecUpdate {
  const update = create(ExecUpdateSchema, { update: { case: "record", value: logRecordOf(rec) } });
  return withEncoding(update, recordUpdateBytes(rec));
}

/** ExecUpdate{record: LogRecord} in field order, proto3 zero values left out, as protobuf-es writes it. */
function recordUpdateBytes(rec: JournalRecord): Uint8Array {
  const w = new BinaryWriter();
  w.tag(1, WireType.LengthDelimited).fork(); // ExecUpdate.record
  if (rec.seq !== 0) w.tag(1, WireType.Varint).int64(rec.seq);
  if (rec.prevHash !== "") w.tag(2, WireType.LengthDelimited).string(rec.prevHash);
  if (rec.contentHash !== "") w.tag(3, WireType.LengthDelimited).string(rec.contentHash);
  if (rec.fence !== 0) w.tag(4, WireType.Varint).int64(rec.fence);
  w.tag(5, WireType.LengthDelimited).bytes(appendedEncoding(rec.event));
  return w.join().finish();
}

export function deltaUpdate(executionId: string, chunk: string, done: boolean): ExecUpdate {
  return create(ExecUpdateSchema, { update: { case: "delta", value: { executionId, partIndex: 0, chunk, done } } });
}
