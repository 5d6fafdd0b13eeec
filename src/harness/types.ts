// The harness authoring API (docs/protocol.md §4.3; docs/harness-authoring.md): a harness describes itself and runs one execution (turn) at a
// time against an EventSink. Invariant: every effect a harness has goes through the sink, so the host
// can journal it live and serve it from the journal on replay; a harness never calls a model itself.
import type {
  Event,
  IdentityRef,
  Message,
  ToolCall,
  ToolChoice,
  ToolDefinition,
  ToolResult,
  Usage,
} from "../gen/agentsessions/v1/common_pb.js";
import type { HarnessDescriptor } from "../gen/agentsessions/v1/harness_pb.js";

export type { HarnessDescriptor };

/** What the host hands a harness at the start of one execution. */
export interface StartInfo {
  readonly sessionUid: string;
  /** 16 lowercase hex; shared by every event of the turn. */
  readonly executionId: string;
  /** Opaque per-execution config, journaled verbatim. */
  readonly config: Uint8Array;
  /**
   * Prior journal events (not this turn's). Empty after a memory restore (invariant I4): a memory
   * harness must never rebuild RAM state from it.
   */
  readonly history: readonly Event[];
  readonly inputs: readonly Message[];
  readonly resumeFromSeq: number;
  readonly identity?: { readonly principal?: IdentityRef; readonly canMintTokens: boolean };
  /**
   * The `x-request-id` of the call that started this turn, for correlating a harness's own logs with
   * the host's (diagnostics only: never journaled, never part of any hash).
   */
  readonly requestId?: string;
}

export interface ModelRequest {
  readonly model: string;
  readonly messages: readonly Message[];
  readonly params?: Readonly<Record<string, string>>;
  readonly tools?: readonly ToolDefinition[];
  readonly toolChoice?: ToolChoice;
}

/** A question for the operator (docs/protocol.md §12.6): the turn parks until an answer fact is committed. */
export interface AskRequest {
  readonly question: string;
  /** Offered answers; with allowFreeText false the answer must be one of them. */
  readonly choices?: readonly string[];
  /** Default: true when there are no choices, else false. */
  readonly allowFreeText?: boolean;
}

/** The operator's answer; `declined` when the question was denied instead of answered. */
export interface AskAnswer {
  readonly text: string;
  readonly declined: boolean;
}

/** A typed post-commit effect (`defineEffect` in src/effects builds and validates these). */
export interface EmittedEffect {
  /** "<plugin>.<name>" */
  readonly key: string;
  readonly payload: unknown;
}

export interface ModelResponse {
  readonly message: Message;
  readonly usage?: Usage;
}

/**
 * The harness's only way to have effects. Blocking calls (model, toolCall) return the host's answer;
 * the others are recorded and return once journaled. A failure is sticky: after one sink call fails
 * (divergence, protocol error, cancellation) every later call fails the same way.
 */
export interface EventSink {
  /** Host-mediated model call: journaled as MODEL_CALL + OUTPUT; served from the journal on replay. */
  model(request: ModelRequest, signal?: AbortSignal): Promise<ModelResponse>;
  /**
   * A tool call the host executes (CONTROLLER_MEDIATED, idempotency key required) or gates on an
   * operator decision (REQUIRES_APPROVAL).
   */
  toolCall(call: ToolCall, signal?: AbortSignal): Promise<ToolResult>;
  /** Extra assistant text, journaled as OUTPUT. Do not repeat a model completion here. */
  output(text: string, signal?: AbortSignal): Promise<void>;
  /** The result of a tool the harness ran itself (IN_HARNESS_REPORTED). */
  report(result: ToolResult, signal?: AbortSignal): Promise<void>;
  usage(usage: Usage, signal?: AbortSignal): Promise<void>;
  /**
   * Asks the operator a question (host sinks implement it; optional for other sinks). The turn parks
   * until `harnesshost answer` commits the answer; a Resume then delivers it here.
   */
  ask?(request: AskRequest, signal?: AbortSignal): Promise<AskAnswer>;
  /**
   * Emits a typed effect, dispatched after the next commit (in-process host sinks only; over the wire
   * effects are host-side only). A key with no registered handler refuses that commit.
   */
  emit?(effect: EmittedEffect): void;
}

export interface Harness {
  describe(): HarnessDescriptor | Promise<HarnessDescriptor>;
  /** Runs exactly one execution. Resolving means COMPLETED; throwing means FAILED. */
  run(start: StartInfo, sink: EventSink, signal: AbortSignal): Promise<void>;
  /**
   * Memory tier: a tag of the layout of this harness's state, stored in every snapshot beside its
   * version (default: the descriptor's version). Change it when the state's shape changes.
   */
  readonly stateSchema?: string;
  /**
   * Memory tier (docs/versioning.md): turns the state a snapshot of another version (or schema) holds
   * — its captured own properties — into this version's. Return undefined for a version it does not
   * know: restoring that snapshot is then refused (FAILED_PRECONDITION). Runs once per upgrade: the
   * host checkpoints the migrated state, tagged with this version.
   */
  migrate?(
    state: Record<string, unknown>,
    fromVersion: string,
    fromSchema: string,
  ): Record<string, unknown> | undefined;
}

/** Creates one harness instance: one per session (an actor) when hosted in a node. */
export type HarnessFactory = () => Harness;
