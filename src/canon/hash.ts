// The journal's hash chain, byte-compatible with the reference implementation:
// content_hash = lowercase hex sha256(JCS({"event": proto3JSON(event), "prev_hash": prev, "seq": "<n>"})).
// Invariant: the hash depends only on the event's proto3-JSON form, its predecessor and its position.
import * as crypto from "node:crypto";
import { toJson, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { EventSchema, type Event } from "../gen/agentsessions/v1/common_pb.js";
import { jcs } from "./jcs.js";
import { protoJcs, recordJcs } from "./proto-jcs.js";

/** proto3-JSON with the reference's options: proto field names, enum names, unset fields omitted. */
export function protoJson<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>): unknown {
  return toJson(schema, message, { useProtoFieldName: true });
}

/** JCS of a message's proto3-JSON form: written directly (proto-jcs.ts), or through the JSON tree when
 * the direct writer declines. */
export function canonicalProto<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>): string {
  return protoJcs(schema, message) ?? jcs(protoJson(schema, message));
}

/** Lowercase hex sha256 (UTF-8 for strings). One-shot `crypto.hash` where the runtime has it (Node ≥ 20.12):
 * no Hash object per call, which is most of the cost of hashing a small record. */
export const sha256Hex: (data: string | Uint8Array) => string =
  typeof crypto.hash === "function"
    ? (data) => crypto.hash("sha256", data, "hex")
    : (data) => crypto.createHash("sha256").update(data).digest("hex");

/** The canonical bytes that a record's content_hash covers. */
export function canonicalRecord(prevHash: string, seq: number | bigint, event: Event): string {
  return recordJcs(EventSchema, event, prevHash, seq) ?? canonicalRecordViaTree(prevHash, seq, event);
}

/** canonicalRecord the original way, through the proto3-JSON tree (what the direct writer must equal). */
export function canonicalRecordViaTree(prevHash: string, seq: number | bigint, event: Event): string {
  return jcs({ event: protoJson(EventSchema, event), prev_hash: prevHash, seq: seq.toString() });
}

/** content_hash of the record at `seq` whose predecessor's hash is `prevHash` ("" at genesis). */
export function hashRecord(prevHash: string, seq: number | bigint, event: Event): string {
  return sha256Hex(canonicalRecord(prevHash, seq, event));
}

/** Same as hashRecord, over an event already in proto3-JSON form (e.g. read from an export). */
export function hashRecordJson(prevHash: string, seq: number | bigint, eventJson: unknown): string {
  return sha256Hex(jcs({ event: eventJson, prev_hash: prevHash, seq: seq.toString() }));
}

/** "sha256:<hex>" digest of a message's canonical form (used for HarnessSpec.spec_digest). */
export function protoDigest<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>): string {
  return `sha256:${sha256Hex(canonicalProto(schema, message))}`;
}
