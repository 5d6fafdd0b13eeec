// The compaction record (docs/protocol.md §16): a harnesshost.v1.Compaction carried as the OUTPUT of
// the summarising model call — role "harnesshost.compaction", one DataPart holding the message's
// proto3-JSON form. Invariant: encoding and decoding are exact inverses over the fields the host
// reads (summary, seq range, input hash, model), and a message that is not exactly this shape is not a
// compaction, so an ordinary OUTPUT is never mistaken for one.
import { create, fromJson, toJson, type JsonObject } from "@bufbuild/protobuf";
import { MessageSchema, type Event, type Message } from "../gen/agentsessions/v1/common_pb.js";
import { CompactionSchema, type Compaction } from "../gen/harnesshost/v1/compaction_pb.js";
import { EventKind } from "../gen/agentsessions/v1/common_pb.js";

export type { Compaction };

/** The role of a compaction record's message. */
export const COMPACTION_ROLE = "harnesshost.compaction";

export interface CompactionInit {
  readonly summary: string;
  readonly fromSeq: number;
  readonly throughSeq: number;
  readonly inputHash: string;
  readonly model: string;
}

/** The OUTPUT message that records a compaction. */
export function compactionMessage(init: CompactionInit): Message {
  const record = create(CompactionSchema, {
    summary: init.summary,
    fromSeq: BigInt(init.fromSeq),
    throughSeq: BigInt(init.throughSeq),
    inputHash: init.inputHash,
    model: init.model,
  });
  const data = toJson(CompactionSchema, record, { useProtoFieldName: true }) as JsonObject;
  return create(MessageSchema, { role: COMPACTION_ROLE, parts: [{ part: { case: "data", value: { data } } }] });
}

/** The compaction a message records, or undefined when it is not a compaction record. */
export function compactionOf(message: Message | undefined): Compaction | undefined {
  if (message?.role !== COMPACTION_ROLE || message.parts.length !== 1) return undefined;
  const part = message.parts[0]?.part;
  if (part?.case !== "data" || part.value.data === undefined) return undefined;
  try {
    return fromJson(CompactionSchema, part.value.data);
  } catch {
    return undefined;
  }
}

/** The compaction an event records (an OUTPUT carrying a compaction message), if any. */
export function compactionOfEvent(event: Event): Compaction | undefined {
  if (event.kind !== EventKind.EVENT_OUTPUT || event.body.case !== "message") return undefined;
  return compactionOf(event.body.value);
}
