// The stored form of a lean session-log projection (docs/protocol.md §5.7.1: what a verified position
// carries). Invariants: decode(encode(log)) answers every query exactly as `log` did at the moment it was
// encoded and folds on from the same head; the stored bytes are untrusted input — decode checks them
// with zod and throws ProjectionUnreadable on anything it cannot rebuild (the caller then folds the
// session from its records), never a half-built log. Typed columns are stored in the host's byte
// order, which the header names: a file moved to a host of the other order is refused, not misread.
import { endianness } from "node:os";
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { z } from "zod";
import { EventSchema, MessageSchema, ToolCallSchema } from "../gen/agentsessions/v1/common_pb.js";
import type { JournalRecord } from "../journal/types.js";
import type { GateEntry } from "./gates.js";
import { type Building, SessionLog, type SessionLogState } from "./projection.js";

/** The format's name and version, first in every encoding. */
const FORMAT = "harnesshost.projection.v1";

/** A stored projection that cannot be rebuilt (damaged, another format or another byte order). */
export class ProjectionUnreadable extends Error {
  override readonly name = "ProjectionUnreadable";
}

const b64 = (bytes: Uint8Array): string =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
const unb64 = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, "base64"));

const int = z.number().int().nonnegative();
const str = z.string();
const record = z.object({ seq: int, prevHash: str, contentHash: str, fence: int, event: str });
const call = str;
const building = z.object({
  executionId: str,
  startIndex: int,
  startSeq: int,
  harness: str,
  harnessVersion: str,
  harnessDigest: str,
  config: str,
  resumeFromSeq: int,
  inputCount: int,
  inputs: z.array(str),
  effects: z.array(z.object({ seq: int, event: str })),
  completed: z.boolean(),
  lastSeq: int,
  error: z.object({ seq: int, code: z.number().int(), description: str }).optional(),
});
const gate = z.object({
  ref: z.object({ executionId: str, toolCallId: str, requestSeq: int }),
  call,
  callSeq: int,
  decision: z.object({ record, approved: z.boolean(), reason: str }).optional(),
  receiptSeq: int.optional(),
});
const stored = z.object({
  format: z.literal(FORMAT),
  order: z.enum(["LE", "BE"]),
  count: int,
  headSeq: int,
  headHash: str,
  ownFrom: int,
  state: z.enum(["NONE", "LIVE", "WARM", "COLD", "TERMINATED"]),
  table: z.object({ ids: z.array(str), starts: str, lasts: str, seen: str, counts: str, done: str }),
  current: building.optional(),
  currentBytes: int,
  gates: z.object({
    calls: z.array(z.tuple([str, z.object({ call, seq: int })])),
    gates: z.array(z.tuple([str, gate])),
  }),
  gateBytes: int,
  lastEnd: int,
  ownSuspend: z
    .object({
      seq: int,
      contentHash: str,
      ref: z.object({ local: str, externalUri: str, memory: z.boolean(), sealed: z.boolean() }),
    })
    .optional(),
  marks: z.object({
    n: int,
    seqs: str,
    pending: str,
    hashes: str,
    odd: z.array(z.tuple([int, str])),
    late: z.array(z.tuple([int, str, z.number().int()])),
  }),
  compactions: z.array(z.object({ seq: int, fromSeq: int, throughSeq: int, executionId: str })),
  pin: z.object({ harness: str, version: str, digest: str, seq: int }).optional(),
  upgrades: z.array(z.object({ seq: int, harness: str, from: str, to: str })),
});
type Stored = z.infer<typeof stored>;

function recordOut(r: JournalRecord): z.infer<typeof record> {
  return {
    seq: r.seq,
    prevHash: r.prevHash,
    contentHash: r.contentHash,
    fence: r.fence,
    event: b64(toBinary(EventSchema, r.event)),
  };
}

function recordIn(r: z.infer<typeof record>): JournalRecord {
  return { ...r, event: fromBinary(EventSchema, unb64(r.event)) };
}

function buildingOut(b: Building): z.infer<typeof building> {
  return {
    ...b,
    config: b64(b.config),
    inputs: b.inputs.map((m) => b64(toBinary(MessageSchema, m))),
    effects: b.effects.map((e) => ({ seq: e.seq, event: b64(toBinary(EventSchema, e.event)) })),
  };
}

function buildingIn(b: z.infer<typeof building>): Building {
  const { error, ...rest } = b;
  return {
    ...rest,
    config: unb64(b.config),
    inputs: b.inputs.map((m) => fromBinary(MessageSchema, unb64(m))),
    effects: b.effects.map((e) => ({ seq: e.seq, event: fromBinary(EventSchema, unb64(e.event)) })),
    ...(error ? { error } : {}),
  };
}

function gateOut(g: GateEntry<JournalRecord>): z.infer<typeof gate> {
  return {
    ref: g.ref,
    call: b64(toBinary(ToolCallSchema, g.call)),
    callSeq: g.callSeq,
    ...(g.decision ? { decision: { ...g.decision, record: recordOut(g.decision.record) } } : {}),
    ...(g.receiptSeq !== undefined ? { receiptSeq: g.receiptSeq } : {}),
  };
}

function gateIn(g: z.infer<typeof gate>): GateEntry<JournalRecord> {
  return {
    ref: g.ref,
    call: fromBinary(ToolCallSchema, unb64(g.call)),
    callSeq: g.callSeq,
    ...(g.decision ? { decision: { ...g.decision, record: recordIn(g.decision.record) } } : {}),
    ...(g.receiptSeq !== undefined ? { receiptSeq: g.receiptSeq } : {}),
  };
}

/**
 * The stored form of a lean log; undefined for a log that keeps no stored form (a full log, or one that
 * broke the execution grammar: SessionLog.exportState).
 */
export function encodeProjection(log: SessionLog<JournalRecord>): Uint8Array | undefined {
  const s = log.exportState();
  if (!s) return undefined;
  const out: Stored = {
    format: FORMAT,
    order: endianness(),
    count: s.count,
    headSeq: s.headSeq,
    headHash: s.headHash,
    ownFrom: s.ownFrom,
    state: s.state,
    table: { ...s.table, ids: [...s.table.ids] },
    ...(s.current ? { current: buildingOut(s.current) } : {}),
    currentBytes: s.currentBytes,
    gates: {
      calls: s.gates.calls.map(([k, c]) => [k, { call: b64(toBinary(ToolCallSchema, c.call)), seq: c.seq }]),
      gates: s.gates.gates.map(([k, g]) => [k, gateOut(g)]),
    },
    gateBytes: s.gateBytes,
    lastEnd: s.lastEnd,
    ...(s.ownSuspend ? { ownSuspend: s.ownSuspend } : {}),
    marks: { ...s.marks, odd: s.marks.odd.map(([i, h]) => [i, h]), late: s.marks.late.map(([a, h, p]) => [a, h, p]) },
    compactions: [...s.compactions],
    ...(s.pin ? { pin: s.pin } : {}),
    upgrades: [...s.upgrades],
  };
  return new TextEncoder().encode(JSON.stringify(out));
}

/** The lean log `encodeProjection` stored; ProjectionUnreadable when the bytes cannot be rebuilt. */
export function decodeProjection(bytes: Uint8Array): SessionLog<JournalRecord> {
  let parsed: Stored;
  try {
    parsed = stored.parse(JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes)));
  } catch (err) {
    throw new ProjectionUnreadable(
      `stored projection is not valid: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  if (parsed.order !== endianness())
    throw new ProjectionUnreadable(`stored projection has ${parsed.order} columns; this host is ${endianness()}`);
  try {
    const { current, ownSuspend, pin, ...rest } = parsed;
    const state: SessionLogState<JournalRecord> = {
      ...rest,
      current: current ? buildingIn(current) : undefined,
      ownSuspend,
      pin,
      gates: {
        calls: parsed.gates.calls.map(([k, c]) => [k, { call: fromBinary(ToolCallSchema, unb64(c.call)), seq: c.seq }]),
        gates: parsed.gates.gates.map(([k, g]) => [k, gateIn(g)]),
      },
    };
    return SessionLog.fromState(state);
  } catch (err) {
    throw new ProjectionUnreadable(
      `stored projection cannot be rebuilt: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}
