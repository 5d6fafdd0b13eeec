// The client limits of src/limits, checked on Sessions requests. Invariant: every check here runs
// before the handler reads or writes anything, so a refused request changes nothing; each refusal is
// the limit's own error (RESOURCE_EXHAUSTED or INVALID_ARGUMENT naming it). What passes can be
// journaled, read back, replayed and sent to a node: an input's nesting is measured with the protobuf
// decoder itself, at nestingDepth, far below the decoders' own recursion limit of 100.
import { messageDepth } from "../wire/message-depth.js";
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import type { Message, Part } from "../gen/agentsessions/v1/common_pb.js";
import { MessageSchema } from "../gen/agentsessions/v1/common_pb.js";
import { beyondLimit, overLimit, type Limits } from "../limits/index.js";
import { required } from "./checks.js";

/** A required id no longer than idChars. */
export function boundedId(limits: Limits, value: string, field: string): string {
  required(value, field);
  return optionalId(limits, value, field);
}

/** An optional id ("" allowed) no longer than idChars. */
export function optionalId(limits: Limits, value: string, field: string): string {
  if (value.length > limits.idChars) beyond(limits, "idChars", `${field} (${value.length} characters)`);
  return value;
}

function beyond(limits: Limits, name: "idChars" | "nestingDepth", what: string): never {
  throw beyondLimit(name, limits[name], what);
}

/** Parts of a message, nested ones (reasoning summaries, tool-result content) included. */
function countParts(parts: readonly Part[], budget: number): number {
  let n = 0;
  const stack: (readonly Part[])[] = [parts];
  while (stack.length > 0) {
    const list = stack.pop() ?? [];
    n += list.length;
    if (n > budget) return n;
    for (const p of list) {
      if (p.part.case === "reasoning") stack.push(p.part.value.summary);
      else if (p.part.case === "toolResult") stack.push(p.part.value.content);
    }
  }
  return n;
}

/**
 * Exec inputs (and the opaque config bytes) within inputParts, inputBytes and nestingDepth. Parts are
 * counted first: it is the cheapest check and the one a many-part request must fail before any work
 * proportional to its size.
 */
export function checkExecInputs(limits: Limits, inputs: readonly Message[], config: Uint8Array): void {
  let parts = 0;
  for (const input of inputs) {
    parts += countParts(input.parts, limits.inputParts - parts);
    if (parts > limits.inputParts) throw overLimit("inputParts", limits.inputParts, undefined, "Exec inputs' parts");
  }
  let bytes = config.byteLength;
  const encoded: Uint8Array[] = [];
  for (const input of inputs) {
    const b = toBinary(MessageSchema, input);
    bytes += b.byteLength;
    if (bytes > limits.inputBytes) {
      throw overLimit("inputBytes", limits.inputBytes, bytes, "Exec inputs and config together");
    }
    encoded.push(b);
  }
  encoded.forEach((b, i) => {
    // Counted on the decoded input as the decoder counts (wire/message-depth.ts): within the limit, its
    // encoding provably decodes and is not decoded again; otherwise the decoder decides.
    const input = inputs[i];
    if (input !== undefined && messageDepth(MessageSchema, input, limits.nestingDepth) <= limits.nestingDepth) return;
    try {
      fromBinary(MessageSchema, b, { recursionLimit: limits.nestingDepth });
    } catch {
      beyond(limits, "nestingDepth", `input ${i} nests deeper than allowed`);
    }
  });
}

/** UTF-8 bytes of a session's name, labels and annotations within metadataBytes. */
export function checkMetadata(
  limits: Limits,
  what: string,
  meta: {
    readonly name?: string;
    readonly labels?: Readonly<Record<string, string>>;
    readonly annotations?: Readonly<Record<string, string>>;
    readonly extra?: readonly string[];
  },
): number {
  let bytes = Buffer.byteLength(meta.name ?? "");
  for (const map of [meta.labels ?? {}, meta.annotations ?? {}]) {
    for (const [k, v] of Object.entries(map)) bytes += Buffer.byteLength(k) + Buffer.byteLength(v);
  }
  for (const s of meta.extra ?? []) bytes += Buffer.byteLength(s);
  if (bytes > limits.metadataBytes) throw overLimit("metadataBytes", limits.metadataBytes, bytes, what);
  return bytes;
}
