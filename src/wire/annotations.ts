// Session annotations the host derives when it serves a session (output only, never stored). Kept
// in a module of their own so clients and the CLI read them without loading the server.

/** The annotation GetSession derives from this host's effect counters for the session (JSON). */
export const EFFECTS_ANNOTATION = "harnesshost.dev/effects";

/** What an open or decided gate asks for: an approval of a tool call, or an answer to a question. */
export type WaitKind = "approval" | "question";

/** The annotation GetSession/ListSessions carry the status in (JSON of TurnAnnotation). */
export const TURN_ANNOTATION = "harnesshost.dev/turn";

/** The status as the wire annotation shows it. */
/** Every turn status a session can have (the annotation's `status`; Console.ListSessions' `turns` filter). */
export const TURN_STATUS_WORDS = [
  "new",
  "completed",
  "running",
  "awaiting",
  "decided",
  "interrupted",
  "invalid",
] as const;
export type TurnStatusWord = (typeof TURN_STATUS_WORDS)[number];

export interface TurnAnnotation {
  readonly status: TurnStatusWord;
  readonly wait?: WaitKind;
  readonly approved?: boolean;
  readonly inherited?: boolean;
  readonly error?: string;
  /** The gate an awaiting or decided turn waits on (the tuple Approve takes). */
  readonly gate?: { readonly execution_id: string; readonly tool_call_id: string; readonly request_seq: number };
  /** The question an awaiting or decided gate asks (wait "question"), as the harness recorded it. */
  readonly question?: {
    readonly text: string;
    readonly choices: readonly string[];
    readonly allow_free_text: boolean;
  };
  /** The CLI command that continues the session (e.g. "resume"), when one does. */
  readonly next?: NextCommand;
}

export type NextCommand = "exec" | "approve" | "answer" | "resume";

/**
 * The annotation GetSession/ListSessions carry the session's pin in (JSON of PinAnnotation,
 * docs/versioning.md); absent before the session's first turn.
 */
export const PIN_ANNOTATION = "harnesshost.dev/pin";

export interface PinAnnotation {
  readonly harness: string;
  readonly version: string;
  /** The build digest the pinning turn recorded; "" when it recorded none. */
  readonly digest: string;
  /** The build this host serves for that version now, when it knows it. */
  readonly serving_digest?: string;
  /** Both digests are known and differ: the code changed without a version bump. */
  readonly drift?: true;
}

/**
 * The annotation GetSession/ListSessions carry the session's newest compaction in (JSON of
 * CompactionAnnotation, docs/protocol.md §16.4); absent when the session never compacted.
 */
export const COMPACTION_ANNOTATION = "harnesshost.dev/compaction";

export interface CompactionAnnotation {
  /** Seq of the compaction record. */
  readonly seq: number;
  readonly from_seq: number;
  /** Later turns' Start.history begins after this seq. */
  readonly through_seq: number;
}

/**
 * The annotation GetSession derives for a session with a checkpoint or a checkpoint failure (JSON of
 * CheckpointAnnotation): the newest checkpoint's seq and this host's last per-turn checkpoint failure.
 */
export const CHECKPOINT_ANNOTATION = "harnesshost.dev/checkpoint";

export interface CheckpointAnnotation {
  /** Seq of the record the newest checkpoint is bound to (0: none). */
  readonly last_seq: number;
  /** Per-turn checkpoint failures of this session on the serving host since it started. */
  readonly failures?: number;
  readonly last_failure?: {
    readonly seq: number;
    readonly reason: string;
    /** RFC 3339 time of the failure. */
    readonly at: string;
  };
}
