// Journal records and turn updates as wire messages. Invariant: a LogRecord on the wire carries the
// stored seq, hashes, fence and event unchanged, so a client can re-verify the chain byte for byte.
import { create } from "@bufbuild/protobuf";
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

export function recordUpdate(rec: JournalRecord): ExecUpdate {
  return create(ExecUpdateSchema, { update: { case: "record", value: logRecordOf(rec) } });
}

export function deltaUpdate(executionId: string, chunk: string, done: boolean): ExecUpdate {
  return create(ExecUpdateSchema, { update: { case: "delta", value: { executionId, partIndex: 0, chunk, done } } });
}
