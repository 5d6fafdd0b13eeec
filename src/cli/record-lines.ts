// The reference agentctl's record line, for `replay --format go` (scripts that parse agentctl output).
// Invariant: the same text agentctl prints for the same record — `seq=` and the seq left-aligned in three
// columns, a space, the EventKind's proto name (its number when this build does not know it), and for
// an event carrying a message two spaces, the role, a colon and each text part after a space.
import { EventKindSchema, type LogRecord } from "../gen/agentsessions/v1/common_pb.js";

/** The proto name of an EventKind (`EVENT_INPUT`), or its number when unknown, as Go's String(). */
function kindName(kind: number): string {
  return EventKindSchema.values.find((v) => v.number === kind)?.name ?? String(kind);
}

export function goRecordLine(record: LogRecord): string {
  const event = record.event;
  const line = `seq=${String(record.seq).padEnd(3)} ${kindName(event?.kind ?? 0)}`;
  if (event?.body.case !== "message") return line;
  const message = event.body.value;
  const texts = message.parts.map((p) => (p.part.case === "text" ? ` ${p.part.value.text}` : "")).join("");
  return `${line}  ${message.role}:${texts}`;
}
