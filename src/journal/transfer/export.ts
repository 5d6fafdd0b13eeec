// JSON Lines export and database-free verification. Invariant: a line is the proto3-JSON LogRecord
// (snake_case names) of one stored record, and verifyJsonl recomputes every hash from the event JSON
// exactly as written, so files produced by any conforming implementation verify the same way.
import { toJson } from "@bufbuild/protobuf";
import { hashRecordJson } from "../../canon/index.js";
import { EventSchema, type Event } from "../../gen/agentsessions/v1/common_pb.js";
import type { Head, Journal } from "../types.js";

/** Outcome of verifying a JSONL export (the same classes as VerifyResult, without a session row). */
export type JsonlVerifyResult =
  | { readonly ok: true; readonly records: number; readonly head: Head }
  | {
      readonly ok: false;
      readonly kind: "tampered" | "undecodable" | "gap";
      /** The first bad seq (or, for a line whose seq cannot be read, its 1-based line number). */
      readonly seq: number;
      readonly line: number;
      readonly message: string;
    };

/** What a line needs of a record: a journal record, or a wire LogRecord (bigint seq and fence). */
export interface LineRecord {
  readonly seq: number | bigint;
  readonly prevHash: string;
  readonly contentHash: string;
  readonly fence: number | bigint;
  readonly event?: Event | undefined;
}

/**
 * One JSON line (no trailing newline):
 * {"seq":"1","prev_hash":"","content_hash":"…","fence":"1","event":{…}}. `prev_hash` is written even
 * when empty so the genesis link is explicit.
 */
export function jsonlLine(rec: LineRecord): string {
  return JSON.stringify({
    seq: String(rec.seq),
    prev_hash: rec.prevHash,
    content_hash: rec.contentHash,
    fence: String(rec.fence),
    event: rec.event ? toJson(EventSchema, rec.event, { useProtoFieldName: true }) : {},
  });
}

/** One line per record of the session, in seq order. */
export async function* exportJsonl(journal: Journal, session: string): AsyncIterable<string> {
  for await (const rec of journal.read(session)) yield jsonlLine(rec);
}

/**
 * Verifies a stream of records (e.g. a server's records of one session) exactly as their export lines
 * would verify, one line at a time: nothing is held but the record being checked, so memory does not
 * grow with the session, and reading stops at the first bad record.
 */
export function verifyRecords(records: AsyncIterable<LineRecord>): Promise<JsonlVerifyResult> {
  return verifyJsonl(
    (async function* () {
      for await (const rec of records) yield jsonlLine(rec);
    })(),
  );
}

/** Verifies a JSONL export with no database: dense seqs from 1, prev links, recomputed hashes. */
export async function verifyJsonl(lines: Iterable<string> | AsyncIterable<string>): Promise<JsonlVerifyResult> {
  let lineNo = 0;
  let expected = 1;
  let prev = "";
  for await (const raw of lines) {
    lineNo += 1;
    const text = raw.trim();
    if (text === "") continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return {
        ok: false,
        kind: "undecodable",
        seq: expected,
        line: lineNo,
        message: `line ${lineNo} (seq ${expected}): not valid JSON`,
      };
    }
    if (!isObject(parsed)) {
      return {
        ok: false,
        kind: "undecodable",
        seq: expected,
        line: lineNo,
        message: `line ${lineNo} (seq ${expected}): not a JSON object`,
      };
    }
    const seq = parseSeq(parsed["seq"]);
    if (seq === undefined) {
      return {
        ok: false,
        kind: "undecodable",
        seq: expected,
        line: lineNo,
        message: `line ${lineNo} (seq ${expected}): missing or invalid seq`,
      };
    }
    const fail = (kind: "tampered" | "undecodable" | "gap", at: number, why: string): JsonlVerifyResult => ({
      ok: false,
      kind,
      seq: at,
      line: lineNo,
      message: `seq ${at}: ${why} (line ${lineNo})`,
    });
    if (seq !== expected) {
      return seq > expected
        ? fail("gap", expected, `sequence gap: seq ${expected} is missing (line holds seq ${seq})`)
        : fail("tampered", seq, `out of order (expected seq ${expected})`);
    }
    const event = parsed["event"];
    if (!isObject(event)) return fail("undecodable", seq, "record has no event object");
    const prevHash = parsed["prev_hash"] ?? "";
    const contentHash = parsed["content_hash"] ?? "";
    if (typeof prevHash !== "string" || typeof contentHash !== "string")
      return fail("undecodable", seq, "hash fields are not strings");
    if (prevHash !== prev) return fail("tampered", seq, "prev_hash mismatch");
    let computed: string;
    try {
      computed = hashRecordJson(prev, seq, event);
    } catch (err) {
      return fail(
        "undecodable",
        seq,
        `event cannot be canonicalised: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    if (computed !== contentHash) return fail("tampered", seq, "content_hash mismatch");
    prev = contentHash;
    expected += 1;
  }
  return { ok: true, records: expected - 1, head: { seq: expected - 1, hash: prev } };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function parseSeq(value: unknown): number | undefined {
  const text = typeof value === "number" ? String(value) : value;
  if (typeof text !== "string" || !/^[1-9]\d{0,15}$/.test(text)) return undefined;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : undefined;
}
