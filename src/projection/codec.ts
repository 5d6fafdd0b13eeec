// The stored form of a lean session-log projection (docs/protocol.md §5.9: what a verified position
// carries). Invariants: decode(encode(log)) answers every query exactly as `log` did at the moment it was
// encoded and folds on from the same head; the stored bytes are untrusted input — decode checks them
// with zod and throws ProjectionUnreadable on anything it cannot rebuild (the caller then folds the
// session from its records), never a half-built log. Layout: a 4-byte little-endian header length, the
// header (JSON: every small field, and the sizes of the sections), then the sections as raw bytes — the
// execution ids (their UTF-8 bytes back to back and a column of their ends) and the per-execution and
// per-mark columns — so a million-event session's projection is copied, not parsed field by field
// (rebuilding it makes no string, object or Map entry per execution: exec-ids.ts). Columns are in the host's byte order, which the header
// names: bytes moved to a host of the other order are refused, not misread.
import { endianness } from "node:os";
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { z } from "zod";
import { EventSchema, MessageSchema, ToolCallSchema } from "../gen/agentsessions/v1/common_pb.js";
import type { JournalRecord } from "../journal/types.js";
import type { GateEntry } from "./gates.js";
import { type Building, SessionLog, type SessionLogState } from "./session-log.js";

/** The format's name and version, first in every encoding. */
const FORMAT = "harnesshost.projection.v2";

/** The sections after the header, in order; the header gives each one's byte length. */
const SECTIONS = ["ids", "idEnds", "starts", "lasts", "seen", "counts", "done", "seqs", "pending", "hashes"] as const;
type Section = (typeof SECTIONS)[number];

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
  sections: z.object(Object.fromEntries(SECTIONS.map((k) => [k, int])) as Record<Section, typeof int>),
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
  const t = s.table;
  const m = s.marks;
  const body: Record<Section, Uint8Array> = {
    ids: t.ids.bytes,
    idEnds: t.ids.ends,
    starts: t.starts,
    lasts: t.lasts,
    seen: t.seen,
    counts: t.counts,
    done: t.done,
    seqs: m.seqs,
    pending: m.pending,
    hashes: m.hashes,
  };
  const header: Stored = {
    format: FORMAT,
    order: endianness(),
    count: s.count,
    headSeq: s.headSeq,
    headHash: s.headHash,
    ownFrom: s.ownFrom,
    state: s.state,
    sections: Object.fromEntries(SECTIONS.map((k) => [k, body[k].byteLength])) as Record<Section, number>,
    ...(s.current ? { current: buildingOut(s.current) } : {}),
    currentBytes: s.currentBytes,
    gates: {
      calls: s.gates.calls.map(([k, c]) => [k, { call: b64(toBinary(ToolCallSchema, c.call)), seq: c.seq }]),
      gates: s.gates.gates.map(([k, g]) => [k, gateOut(g)]),
    },
    gateBytes: s.gateBytes,
    lastEnd: s.lastEnd,
    ...(s.ownSuspend ? { ownSuspend: s.ownSuspend } : {}),
    marks: { n: m.n, odd: m.odd.map(([i, h]) => [i, h]), late: m.late.map(([a, h, p]) => [a, h, p]) },
    compactions: [...s.compactions],
    ...(s.pin ? { pin: s.pin } : {}),
    upgrades: [...s.upgrades],
  };
  const head = Buffer.from(JSON.stringify(header), "utf8");
  const size = SECTIONS.reduce((n, k) => n + body[k].byteLength, 4 + head.byteLength);
  const out = new Uint8Array(size);
  new DataView(out.buffer).setUint32(0, head.byteLength, true);
  out.set(head, 4);
  let at = 4 + head.byteLength;
  for (const k of SECTIONS) {
    out.set(body[k], at);
    at += body[k].byteLength;
  }
  return out;
}

/** The lean log `encodeProjection` stored; ProjectionUnreadable when the bytes cannot be rebuilt. */
export function decodeProjection(bytes: Uint8Array): SessionLog<JournalRecord> {
  const why = (err: unknown) => (err instanceof Error ? err.message : String(err));
  let parsed: Stored;
  const body = {} as Record<Section, Uint8Array>;
  try {
    if (bytes.byteLength < 4) throw new RangeError("shorter than its header length");
    const headLength = new DataView(bytes.buffer, bytes.byteOffset, 4).getUint32(0, true);
    if (4 + headLength > bytes.byteLength) throw new RangeError("header runs past the end");
    const text = Buffer.from(bytes.buffer, bytes.byteOffset + 4, headLength).toString("utf8");
    parsed = stored.parse(JSON.parse(text));
    let at = 4 + headLength;
    for (const k of SECTIONS) {
      const n = parsed.sections[k];
      if (at + n > bytes.byteLength) throw new RangeError(`section ${k} runs past the end`);
      body[k] = bytes.subarray(at, at + n);
      at += n;
    }
    if (at !== bytes.byteLength) throw new RangeError(`${bytes.byteLength - at} bytes after the last section`);
  } catch (err) {
    throw new ProjectionUnreadable(`stored projection is not valid: ${why(err)}`);
  }
  if (parsed.order !== endianness())
    throw new ProjectionUnreadable(`stored projection has ${parsed.order} columns; this host is ${endianness()}`);
  try {
    const { current, ownSuspend, pin, sections: _sections, marks, ...rest } = parsed;
    const state: SessionLogState<JournalRecord> = {
      ...rest,
      table: {
        ids: { bytes: body.ids, ends: body.idEnds },
        starts: body.starts,
        lasts: body.lasts,
        seen: body.seen,
        counts: body.counts,
        done: body.done,
      },
      marks: { ...marks, seqs: body.seqs, pending: body.pending, hashes: body.hashes },
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
    throw new ProjectionUnreadable(`stored projection cannot be rebuilt: ${why(err)}`);
  }
}
