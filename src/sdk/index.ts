// `harnesshost/sdk`: everything a harness author imports, in one place. Invariant: this module only
// re-exports, so an author's harness sees exactly the types, enums, text helpers and serving entry
// point the host itself uses — never a parallel copy.
export type {
  AskAnswer,
  AskRequest,
  EmittedEffect,
  EventSink,
  Harness,
  HarnessDescriptor,
  HarnessFactory,
  ModelRequest,
  ModelResponse,
  StartInfo,
} from "../harness/types.js";
export { serveHarness } from "../node/serve.js";
/** Randomness that differs in every fork child and restore: draw per-copy values through these. */
export { freshRandom, freshRandomBytes, freshRandomUUID } from "../harness/fresh-random.js";
export type { HarnessNode, ServeHarnessOptions } from "../node/serve.js";
export type { SnapshotAware, SnapshotClass } from "../node/actor-table.js";
export { create } from "@bufbuild/protobuf";
export { HarnessDescriptorSchema, Resumability } from "../gen/agentsessions/v1/harness_pb.js";
export {
  EventKind,
  Mediation,
  MessageSchema,
  ToolCallSchema,
  ToolResult_Code,
  ToolResultSchema,
} from "../gen/agentsessions/v1/common_pb.js";
export type {
  Event,
  IdentityRef,
  Message,
  ToolCall,
  ToolChoice,
  ToolDefinition,
  ToolResult,
  Usage,
} from "../gen/agentsessions/v1/common_pb.js";
/** `textOf(message)`: its text parts, concatenated; `textMessage(role, text)`: a one-text-part message. */
export { textMessage, textOf } from "../controller/events.js";
