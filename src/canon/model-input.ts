// The model-input hash of invariant I0: sha256 over the JCS of the proto3-JSON of
// {model, params, messages, tools, tool_choice}. Invariant: two requests hash equal exactly when
// their proto3-JSON forms are equal. This is harnesshost's own form; the reference hashes a
// Go-specific encoding, so Go-written input hashes are not comparable (docs/protocol.md §5).
import { create } from "@bufbuild/protobuf";
import { ModelCallSchema, type Message, type ModelCall } from "../gen/agentsessions/v1/common_pb.js";
import { canonicalProto, sha256Hex } from "./hash.js";

/** A JSON string literal of `s` (JCS: JSON.stringify of a well-formed string), or undefined. */
function jsonString(s: string): string | undefined {
  return (s as string & { isWellFormed(): boolean }).isWellFormed() ? JSON.stringify(s) : undefined;
}

/**
 * The JCS text of the proto3-JSON of a request whose messages hold only text parts and that names no
 * tools — the common case, written directly instead of by reflection and a JSON tree. Keys are
 * emitted in JCS order (messages < model < params; parts < role). Undefined for anything else,
 * including strings JCS refuses (lone surrogates), which the reflective path then decides. It must
 * equal the reflective form exactly (test/canon/model-input.test.ts checks both on random requests).
 */
function textOnlyCanonical(
  request: Pick<ModelCall, "model" | "params" | "messages" | "tools" | "toolChoice">,
): string | undefined {
  if (request.tools.length > 0 || request.toolChoice !== undefined) return undefined;
  let out = "";
  if (request.messages.length > 0) {
    let messages = "";
    for (const m of request.messages as readonly Message[]) {
      let parts = "";
      for (const p of m.parts) {
        if (p.part.case !== "text") return undefined;
        let part = '{"text":{}}';
        if (p.part.value.text !== "") {
          const text = jsonString(p.part.value.text);
          if (text === undefined) return undefined;
          part = `{"text":{"text":${text}}}`;
        }
        parts += parts === "" ? part : `,${part}`;
      }
      let msg = parts === "" ? "" : `"parts":[${parts}]`;
      if (m.role !== "") {
        const role = jsonString(m.role);
        if (role === undefined) return undefined;
        msg += `${msg === "" ? "" : ","}"role":${role}`;
      }
      messages += `${messages === "" ? "" : ","}{${msg}}`;
    }
    out = `"messages":[${messages}]`;
  }
  if (request.model !== "") {
    const model = jsonString(request.model);
    if (model === undefined) return undefined;
    out += `${out === "" ? "" : ","}"model":${model}`;
  }
  const keys = Object.keys(request.params);
  if (keys.length > 0) {
    keys.sort();
    let params = "";
    for (const k of keys) {
      const key = jsonString(k);
      const value = jsonString(request.params[k] ?? "");
      if (key === undefined || value === undefined) return undefined;
      params += `${params === "" ? "" : ","}${key}:${value}`;
    }
    out += `${out === "" ? "" : ","}"params":{${params}}`;
  }
  return `{${out}}`;
}

export function modelInputHash(request: ModelCall): string {
  const fast = textOnlyCanonical(request);
  if (fast !== undefined) return sha256Hex(fast);
  return reflectiveModelInputHash(request);
}

/** The same hash computed through protobuf-es reflection (the reference implementation of it). */
export function reflectiveModelInputHash(request: ModelCall): string {
  const stripped = create(ModelCallSchema, {
    model: request.model,
    params: request.params,
    messages: request.messages,
    tools: request.tools,
    toolChoice: request.toolChoice,
  });
  return sha256Hex(canonicalProto(ModelCallSchema, stripped));
}
