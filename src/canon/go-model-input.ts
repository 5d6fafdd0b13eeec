// The model-input hash in the reference (Go) host's form: sha256 over Go encoding/json of its
// ModelRequest struct — keys in struct order with Go's field names, nil slices/maps/pointers as
// null, map keys sorted by bytes, strings escaped as Go does (<, >, &, U+2028/9 as \u escapes),
// []byte as padded base64. Invariant: for the request shapes the reference's own vectors pin (text,
// file, data, reasoning and tool-result parts, params) it returns the exact hash the Go host
// recorded; for shapes they do not pin (tool definitions, tool choice, tool-call parts) it refuses
// rather than guess (undefined), so a mismatch is never silently accepted.
import type { JsonValue } from "@bufbuild/protobuf";
import type { Message, ModelCall, Part, ToolResult } from "../gen/agentsessions/v1/common_pb.js";
import { sha256Hex } from "./hash.js";

/** Thrown inside the encoder for a request shape the reference's vectors do not pin. */
class Unpinned extends Error {}

/** hex sha256 of the Go encoding of `request`, or undefined when the shape is not reproducible. */
export function goModelInputHash(
  request: Pick<ModelCall, "model" | "params" | "messages" | "tools" | "toolChoice">,
): string | undefined {
  const text = goModelInputJson(request);
  return text === undefined ? undefined : sha256Hex(text);
}

/** The Go encoding/json bytes of the request (as a string), or undefined (see the module invariant). */
export function goModelInputJson(
  request: Pick<ModelCall, "model" | "params" | "messages" | "tools" | "toolChoice">,
): string | undefined {
  if (request.tools.length > 0 || request.toolChoice !== undefined) return undefined;
  try {
    const messages = request.messages.length === 0 ? "null" : `[${request.messages.map(message).join(",")}]`;
    return `{"Model":${goString(request.model)},"Messages":${messages},"Params":${stringMap(request.params)}}`;
  } catch (err) {
    if (err instanceof Unpinned) return undefined;
    throw err;
  }
}

function message(m: Message): string {
  return `{"Role":${goString(m.role)},"Parts":${parts(m.parts)}}`;
}

function parts(list: readonly Part[]): string {
  return list.length === 0 ? "null" : `[${list.map(part).join(",")}]`;
}

function part(p: Part): string {
  const v = p.part;
  const text = v.case === "text" ? `{"Text":${goString(v.value.text)}}` : "null";
  let file = "null";
  if (v.case === "file") {
    const f = v.value;
    const bytes = f.source.case === "bytes" && f.source.value.length > 0 ? base64(f.source.value) : "null";
    const uri = f.source.case === "uri" ? f.source.value : "";
    file = `{"MIME":${goString(f.mime)},"Bytes":${bytes},"URI":${goString(uri)},"Digest":${goString(f.digest)},"Name":${goString(f.name)}}`;
  }
  const data = v.case === "data" && v.value.data !== undefined ? goJson(v.value.data) : "null";
  let reasoning = "null";
  if (v.case === "reasoning") {
    const r = v.value;
    const opaque = r.opaque.case === "opaqueBytes" && r.opaque.value.length > 0 ? base64(r.opaque.value) : "null";
    const opaqueUri = r.opaque.case === "opaqueUri" ? r.opaque.value : "";
    reasoning =
      `{"Provider":${goString(r.provider)},"ModelID":${goString(r.modelId)},"Opaque":${opaque},` +
      `"OpaqueURI":${goString(opaqueUri)},"OpaqueDigest":${goString(r.opaqueDigest)},"Summary":${parts(r.summary)},` +
      `"ItemID":${goString(r.itemId)},"Ordinal":${r.ordinal},"ValidityScope":${goString(r.validityScope)}}`;
  }
  if (v.case === "toolCall") throw new Unpinned("tool-call parts");
  const result = v.case === "toolResult" ? `,"ToolResult":${toolResult(v.value)}` : "";
  return `{"Text":${text},"File":${file},"Data":${data},"Reasoning":${reasoning}${result}}`;
}

function toolResult(r: ToolResult): string {
  let out =
    `{"ID":${goString(r.id)},"Output":${r.output === undefined ? "null" : goJson(r.output)},` +
    `"OutputURI":${goString(r.outputUri)},"OutputDigest":${goString(r.outputDigest)},` +
    `"IsError":${r.isError ? "true" : "false"},"Error":${goString(r.error)}`;
  if (r.content.length > 0) out += `,"Content":${parts(r.content)}`;
  if (r.code !== 0) out += `,"Code":${r.code}`;
  if (r.approvalRequestSeq !== 0n) out += `,"ApprovalRequestSeq":${r.approvalRequestSeq}`;
  if (r.approvalDecisionSeq !== 0n) out += `,"ApprovalDecisionSeq":${r.approvalDecisionSeq}`;
  return `${out}}`;
}

function stringMap(map: Readonly<Record<string, string>>): string {
  const keys = byteSorted(Object.keys(map));
  if (keys.length === 0) return "null";
  return `{${keys.map((k) => `${goString(k)}:${goString(map[k] ?? "")}`).join(",")}}`;
}

/** Go encoding of a decoded JSON value (a Struct becomes map[string]any: float64 numbers, sorted keys). */
function goJson(value: JsonValue): string {
  if (value === null) return "null";
  if (typeof value === "string") return goString(value);
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new Unpinned("non-finite number");
    return Object.is(value, -0) ? "-0" : JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(goJson).join(",")}]`;
  const keys = byteSorted(Object.keys(value));
  return `{${keys.map((k) => `${goString(k)}:${goJson(value[k] as JsonValue)}`).join(",")}}`;
}

function byteSorted(keys: string[]): string[] {
  return keys.sort((a, b) => Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8")));
}

function base64(bytes: Uint8Array): string {
  return `"${Buffer.from(bytes).toString("base64")}"`;
}

/** A Go encoding/json string literal (HTML-safe escaping; lone surrogates become U+FFFD as invalid UTF-8 does). */
export function goString(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0) ?? 0;
    if (ch === '"') out += '\\"';
    else if (ch === "\\") out += "\\\\";
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (ch === "\b") out += "\\b";
    else if (ch === "\f") out += "\\f";
    else if (c < 0x20 || ch === "<" || ch === ">" || ch === "&" || c === 0x2028 || c === 0x2029)
      out += `\\u${c.toString(16).padStart(4, "0")}`;
    else if (c >= 0xd800 && c <= 0xdfff) out += "\ufffd";
    else out += ch;
  }
  return `${out}"`;
}
