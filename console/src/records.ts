// How a journal record reads on screen: its kind, a one-line summary, and the pairing of tool calls
// with their approvals and results. Invariant: summaries are derived from the record alone plus the
// pairing index of the records loaded — the payload itself is always available unabridged beside it.
import { toJsonString } from "@bufbuild/protobuf";
import {
  Lifecycle_Kind,
  type LogRecord,
  LogRecordSchema,
  type Message,
} from "../../src/gen/agentsessions/v1/common_pb.js";

export const ASK_TOOL = "harnesshost.ask";

export function kindOf(rec: LogRecord): string {
  return rec.event?.body.case ?? "unknown";
}

export function textOf(message: Message | undefined): string {
  return (message?.parts ?? [])
    .map((p) => (p.part.case === "text" ? p.part.value.text : p.part.case ? `[${p.part.case}]` : ""))
    .join("");
}

export function payloadJson(rec: LogRecord): string {
  return toJsonString(LogRecordSchema, rec, { prettySpaces: 2 });
}

/** Where a tool call's approval request, decision and result are, by `<execution>/<call id>`. */
export interface CallLinks {
  call?: bigint;
  request?: bigint;
  decision?: bigint;
  approved?: boolean;
  result?: bigint;
}

export function linksOf(records: readonly LogRecord[]): Map<string, CallLinks> {
  const links = new Map<string, CallLinks>();
  const at = (exec: string, id: string): CallLinks => {
    const key = `${exec}/${id}`;
    let l = links.get(key);
    if (l === undefined) {
      l = {};
      links.set(key, l);
    }
    return l;
  };
  for (const rec of records) {
    const ev = rec.event;
    if (!ev) continue;
    const b = ev.body;
    if (b.case === "tool") at(ev.executionId, b.value.id).call = rec.seq;
    else if (b.case === "approval") at(ev.executionId, b.value.toolCallId).request = rec.seq;
    else if (b.case === "approvalResult") {
      const l = at(ev.executionId, b.value.toolCallId);
      l.decision = rec.seq;
      l.approved = b.value.approved;
    } else if (b.case === "result") at(ev.executionId, b.value.id).result = rec.seq;
  }
  return links;
}

/** The call id a record is about, for its pairing line. */
export function callIdOf(rec: LogRecord): string | undefined {
  const b = rec.event?.body;
  switch (b?.case) {
    case "tool":
    case "result":
      return b.value.id;
    case "approval":
    case "approvalResult":
      return b.value.toolCallId;
    default:
      return undefined;
  }
}

export function summaryOf(rec: LogRecord): string {
  const b = rec.event?.body;
  switch (b?.case) {
    case "message":
      return `${b.value.role}: ${textOf(b.value)}`;
    case "model":
      return `model ${b.value.model || "(default)"} · input ${b.value.inputHash.slice(0, 19)}…`;
    case "tool":
      return `${b.value.tool}(${JSON.stringify(b.value.args ?? {})}) · call ${b.value.id}`;
    case "result":
      return `result of ${b.value.id}${b.value.isError ? ` · error: ${b.value.error}` : ""}: ${JSON.stringify(b.value.output ?? {})}`;
    case "approval":
      return `approval requested for ${b.value.toolCallId}${b.value.reason ? `: ${b.value.reason}` : ""}`;
    case "approvalResult":
      return `${b.value.approved ? "approved" : "denied"} ${b.value.toolCallId}${b.value.reason ? `: ${b.value.reason}` : ""}`;
    case "usage":
      return `usage ${b.value.inputTokens} in / ${b.value.outputTokens} out`;
    case "lifecycle":
      return `lifecycle ${(Lifecycle_Kind[b.value.kind] ?? String(b.value.kind)).replace("LIFECYCLE_", "").toLowerCase()}${b.value.detail ? ` ${b.value.detail}` : ""}`;
    case "end":
      return `end ${b.value.state}${b.value.error ? ` · ${b.value.error.description}` : ""}`;
    case "error":
      return `error ${b.value.code}: ${b.value.description}`;
    case "executionStart":
      return `execution start · ${b.value.harness}${b.value.resumeFromSeq > 0n ? ` · resume from ${b.value.resumeFromSeq}` : ""}`;
    default:
      return "";
  }
}
