// How a journal record reads on screen: its kind, a one-line summary in an operator's words, the
// pairing of tool calls with their approvals and results, and whether forking there means something.
// Invariants: summaries are derived from the record alone plus the pairing index of the records
// loaded — the payload itself, with the host's own wording (details such as `parked:…`), is always
// available unabridged beside it; a summary never shows an internal encoding.
import { toJsonString } from "@bufbuild/protobuf";
import {
  type Lifecycle,
  Lifecycle_Kind,
  type LogRecord,
  LogRecordSchema,
  type Message,
} from "../../src/gen/agentsessions/v1/common_pb.js";

export const ASK_TOOL = "harnesshost.ask";

export function kindOf(rec: LogRecord): string {
  return rec.event?.body.case ?? "unknown";
}

type Kind = NonNullable<NonNullable<LogRecord["event"]>["body"]["case"]>;

const KIND_LABELS: Readonly<Record<Kind, string>> = {
  message: "message",
  model: "model call",
  tool: "tool call",
  result: "tool result",
  approval: "approval asked",
  approvalResult: "decision",
  usage: "usage",
  lifecycle: "lifecycle",
  end: "turn end",
  error: "error",
  executionStart: "turn start",
  parked: "parked",
};

/** The record's kind as the timeline labels it (kindOf is the wire's name, kept in data-kind). */
export function kindLabel(rec: LogRecord): string {
  const kind = rec.event?.body.case;
  return kind === undefined ? "unknown" : KIND_LABELS[kind];
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

/**
 * Who made a record, in an operator's words: `by NAME` (a name the host verified, docs/protocol.md §19),
 * `by NAME (on behalf of OTHER)`, or `claimed by NAME` for an identity only a client asserted; undefined
 * when the record names no one.
 */
export function actorText(rec: LogRecord): string | undefined {
  const a = rec.event?.actor;
  if (a === undefined || a.principal === "") return undefined;
  const verified = a.issuer.startsWith("harnesshost:");
  const behalf = verified && a.subject !== "" ? ` (on behalf of ${a.subject})` : "";
  return `${verified ? "by" : "claimed by"} ${a.principal}${behalf}`;
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
      return lifecycleSummary(b.value);
    case "end":
      return `turn ${END_WORDS[b.value.state] ?? b.value.state.toLowerCase()}${b.value.error ? ` · ${b.value.error.description}` : ""}`;
    case "error":
      return `error ${b.value.code}: ${b.value.description}`;
    case "executionStart":
      return `turn started · ${b.value.harness}${b.value.resumeFromSeq > 0n ? ` · re-driven from seq ${b.value.resumeFromSeq}` : ""}`;
    default:
      return "";
  }
}

const END_WORDS: Readonly<Record<string, string>> = {
  COMPLETED: "completed",
  FAILED: "failed",
  CANCELED: "cancelled",
  CANCELLED: "cancelled",
};

/** The host's park detail, `parked:<execution>:<call>:<request seq>` (src/controller/approvals.ts). */
const PARKED = /^parked:(.+):([^:]+):(\d+)$/;
const FORKED = /^parent@(\d+)$/;
const UPGRADED = "harness-upgrade:";

function snapshotWords(l: Lifecycle): string {
  if (l.snapshotMemory) return ` · memory snapshot ${l.snapshotExternalUri.slice(0, 19)}…`;
  return "";
}

/** A lifecycle record as an operator reads it (the raw detail stays in the payload). */
export function lifecycleSummary(l: Lifecycle): string {
  switch (l.kind) {
    case Lifecycle_Kind.LIFECYCLE_SUSPEND: {
      const parked = PARKED.exec(l.detail);
      if (parked)
        return `parked: waiting for a person on call ${parked[2]} (asked at seq ${parked[3]}); compute freed${snapshotWords(l)}`;
      return `suspended: compute freed${snapshotWords(l)}`;
    }
    case Lifecycle_Kind.LIFECYCLE_RESUME:
      return "resumed";
    case Lifecycle_Kind.LIFECYCLE_FORK: {
      const at = FORKED.exec(l.detail);
      return at ? `forked from the parent session at its seq ${at[1]}` : "forked from the parent session";
    }
    case Lifecycle_Kind.LIFECYCLE_BASELINE: {
      if (l.detail.startsWith(UPGRADED)) {
        try {
          const u = JSON.parse(l.detail.slice(UPGRADED.length)) as { from?: unknown; to?: unknown };
          if (typeof u.to === "string")
            return `upgraded to version ${u.to}${typeof u.from === "string" && u.from !== "" ? ` (from ${u.from})` : ""}`;
        } catch {
          // Not the host's upgrade detail: shown as a baseline.
        }
      }
      return "baseline: later turns start from here";
    }
    case Lifecycle_Kind.LIFECYCLE_CANCEL:
      return `turn cancelled${l.detail ? `: ${l.detail}` : ""}`;
    case Lifecycle_Kind.LIFECYCLE_UNSPECIFIED:
      return "lifecycle event";
    default:
      return `lifecycle ${String(l.kind)}`;
  }
}

/**
 * Where forking means something, with why, by seq: where the session rests between turns (a turn's end,
 * and the lifecycle records after it — the last of such a run, since forking at any of them gives the
 * same child), and at the head of a session no turn is running on (fork it as it is now, e.g. while
 * parked). Records inside a turn are not offered: a child forked there starts with half a turn, and a
 * gate it inherits is not its own to decide.
 */
export function forkPoints(records: readonly LogRecord[], p: { head: number; running: boolean }): Map<number, string> {
  const points = new Map<number, string>();
  const resting: boolean[] = [];
  records.forEach((rec, i) => {
    const b = rec.event?.body;
    const parks = b?.case === "lifecycle" && PARKED.test(b.value.detail);
    resting[i] = b?.case === "end" || (b?.case === "lifecycle" && !parks && resting[i - 1] === true);
  });
  records.forEach((rec, i) => {
    const seq = Number(rec.seq);
    const next = records[i + 1];
    const lastOfRun = next === undefined || !(next.event?.body.case === "lifecycle" && resting[i + 1] === true);
    if (seq === p.head && !p.running) points.set(seq, "fork a new session as this one is now");
    else if (resting[i] === true && lastOfRun) points.set(seq, "fork a new session after this turn");
  });
  return points;
}
