// The model-input hash of invariant I0: sha256 over the JCS of the proto3-JSON of
// {model, params, messages, tools, tool_choice}. Invariant: two requests hash equal exactly when
// their proto3-JSON forms are equal. This is harnesshost's own form; the reference hashes a
// Go-specific encoding, so Go-written input hashes are not comparable (docs/protocol.md §5).
import { create } from "@bufbuild/protobuf";
import { ModelCallSchema, type ModelCall } from "../gen/agentsessions/v1/common_pb.js";
import { canonicalProto, sha256Hex } from "./hash.js";

export function modelInputHash(request: ModelCall): string {
  const stripped = create(ModelCallSchema, {
    model: request.model,
    params: request.params,
    messages: request.messages,
    tools: request.tools,
    toolChoice: request.toolChoice,
  });
  return sha256Hex(canonicalProto(ModelCallSchema, stripped));
}
