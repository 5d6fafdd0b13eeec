// The model-input hash of invariant I0: sha256 over the JCS of the proto3-JSON of
// {model, params, messages, tools, tool_choice}. Invariant: two requests hash equal exactly when
// their proto3-JSON forms are equal. This is harnesshost's own form; the reference hashes a
// Go-specific encoding, so Go-written input hashes are not comparable (docs/protocol.md §5).
import { create } from "@bufbuild/protobuf";
import { ModelCallSchema, type Message, type ModelCall } from "../gen/agentsessions/v1/common_pb.js";
import { canonicalProto, sha256Hex } from "./hash.js";
import { jcs } from "./jcs.js";

/**
 * proto3-JSON of a request whose messages hold only text parts and that names no tools — the
 * common case, built directly instead of by reflection. Undefined for anything else. It must equal
 * the reflective form exactly (test/canon/model-input.test.ts checks both on random requests).
 */
function textOnlyJson(request: Pick<ModelCall, "model" | "params" | "messages" | "tools" | "toolChoice">): unknown {
  if (request.tools.length > 0 || request.toolChoice !== undefined) return undefined;
  const messages: unknown[] = [];
  for (const m of request.messages as readonly Message[]) {
    const parts: unknown[] = [];
    for (const p of m.parts) {
      if (p.part.case !== "text") return undefined;
      parts.push({ text: p.part.value.text === "" ? {} : { text: p.part.value.text } });
    }
    const msg: Record<string, unknown> = {};
    if (m.role !== "") msg["role"] = m.role;
    if (parts.length > 0) msg["parts"] = parts;
    messages.push(msg);
  }
  const json: Record<string, unknown> = {};
  if (request.model !== "") json["model"] = request.model;
  if (Object.keys(request.params).length > 0) json["params"] = { ...request.params };
  if (messages.length > 0) json["messages"] = messages;
  return json;
}

export function modelInputHash(request: ModelCall): string {
  const fast = textOnlyJson(request);
  if (fast !== undefined) return sha256Hex(jcs(fast));
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
