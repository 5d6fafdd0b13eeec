// `harnesshost/client`: a typed client for a host's Sessions API and operator HarnessRegistry over
// gRPC. Invariant: this module only re-exports; the CLI's `--server` mode runs on this same client.
export { connect } from "./connect.js";
export type { ConnectOptions, HarnessHostClient, TlsOptions } from "./connect.js";
export { SessionsClient } from "./sessions.js";
export type {
  CreateOptions,
  DecisionResult,
  ExecOptions,
  GateTuple,
  ListOptions,
  ResumeResult,
  Seq,
  SuspendResult,
} from "./sessions.js";
export { turnOf } from "./turn.js";
export type { Session, Turn } from "./turn.js";
export { COMPUTE_STATE_WORDS } from "../wire/compute-states.js";
export { TURN_STATUS_WORDS, type TurnStatusWord } from "../wire/annotations.js";
export type { ComputeStateWord } from "../wire/compute-states.js";
export { HarnessesClient } from "./harnesses.js";
export type { RegisterHarness } from "./harnesses.js";
export { VersionsClient } from "./versions.js";
export type { UpgradeResult } from "./versions.js";
export type { HarnessVersion } from "../gen/harnesshost/v1/versions_pb.js";
export { ExecCall, outputOf, outputsOf } from "./exec.js";
export type { ExecEvent, ExecResult } from "./exec.js";
export type { CallOptions } from "./options.js";
export { EFFECTS_ANNOTATION } from "../wire/annotations.js";
export { ERROR_CODES, ErrorCode, HarnessHostError, isHarnessHostError, STATUS_CODES } from "./errors.js";
export type { HarnessHostErrorOptions, StatusCode } from "./errors.js";
export { ComputeState, ExecState } from "../gen/agentsessions/v1/session_pb.js";
export { EventKind } from "../gen/agentsessions/v1/common_pb.js";
export type { Event, LogRecord, Message } from "../gen/agentsessions/v1/common_pb.js";
export { HarnessSource, HarnessState, RegisterOutcome } from "../gen/agentsessions/v1/harness_registry_pb.js";
export type { HarnessRegistration, RegisterHarnessResponse } from "../gen/agentsessions/v1/harness_registry_pb.js";
