// The one table of every resource limit the host enforces. Invariant: each limit is named
// here once, with its default, unit, the reason for that default and the side it guards; the code
// reads limits only through `Limits` (src/limits/index.ts), and docs/operations.md's limits table is
// rendered from this table (a test keeps them equal). Add a limit by adding a row — nothing else.

export type LimitUnit = "bytes" | "count" | "levels" | "ms" | "chars";

/** Which peer or resource the limit protects the host from. */
export type LimitScope = "client" | "node" | "memory" | "lifecycle";

export interface LimitSpec {
  readonly default: number;
  readonly unit: LimitUnit;
  readonly scope: LimitScope;
  /** What is counted and what happens past the limit (one sentence). */
  readonly what: string;
  /** Why the default is what it is (one or two sentences). */
  readonly why: string;
  /** Smallest accepted value when configured (defaults to 1). */
  readonly min?: number;
}

const KiB = 1024;
const MiB = 1024 * KiB;
/** A snapshot bound below one 1 MiB chunk would refuse every non-trivial actor. */
const SNAPSHOT_CHUNK_MIN = 1 * MiB;

/**
 * Every limit, keyed by the name used in `serve --limit NAME=VALUE`, in HostConfig.limits and in the
 * error a refused request gets. Rows are grouped by scope; keep each group's rows together.
 */
export const LIMIT_TABLE = {
  // ── client: enforced on Sessions requests before anything is journaled ──────────────────────────
  requestBytes: {
    default: 4 * MiB,
    unit: "bytes",
    scope: "client",
    what: "Largest encoded request message the Sessions and HTTP listeners accept; larger is RESOURCE_EXHAUSTED before it is decoded. On the HTTP listener it also bounds the message after decompression (a gzip or br body is decompressed no further, and the refusal names this limit) and a body carries exactly one message (docs/operations.md, The HTTP listener).",
    why: "gRPC's own default; a request is decoded whole in memory, so this bounds what one call can make the host allocate before any check runs.",
    min: 64 * KiB,
  },
  inputBytes: {
    default: 1 * MiB,
    unit: "bytes",
    scope: "client",
    what: "Encoded bytes of one Exec's inputs together; more is RESOURCE_EXHAUSTED and nothing is journaled.",
    why: "Inputs are journaled and sent again with the history of every later turn of a stateless session; 1 MiB is far above a prompt and keeps hundreds of turns within one history frame.",
  },
  inputParts: {
    default: 1024,
    unit: "count",
    scope: "client",
    what: "Parts of one Exec's inputs together, nested parts (reasoning summaries) included; more is RESOURCE_EXHAUSTED.",
    why: "Each part costs a decoded object, a canonical-JSON walk and a hash input; a million empty parts fit in 4 MiB and stalled the event loop for seconds.",
  },
  requestMessages: {
    default: 100_000,
    unit: "count",
    scope: "client",
    what: "Protobuf messages one Sessions request decodes into (parts, struct values, map entries), counted on its bytes before it is decoded, on both listeners; more is RESOURCE_EXHAUSTED and nothing is decoded. On the HTTP listener a binary body (Connect, gRPC-Web) is counted after decompression, and a JSON body counts its JSON values (each `{`, `[`, `:` and `,` outside strings, plus one), an upper bound on its messages.",
    why: "A decoded message costs hundreds of bytes and a 4 MiB request can hold two million empty ones: four concurrent million-part Execs took the host to 2.2 GiB RSS before inputParts could refuse them. 100,000 leaves room for inputParts and a data part's JSON values, and bounds a request's decoded objects to tens of MiB.",
  },
  nestingDepth: {
    default: 32,
    unit: "levels",
    scope: "client",
    what: "Message nesting depth inside one input (a Struct value inside a list inside a struct counts each level); deeper is INVALID_ARGUMENT.",
    why: "Protobuf decoders stop at 100 levels and a journaled input is re-wrapped (LogRecord, Event, Start.history, Connect frame) on its way to replay, verify and nodes; 32 leaves that wrapping a wide margin, so whatever is journaled can always be read back and sent on.",
  },
  metadataBytes: {
    default: 16 * KiB,
    unit: "bytes",
    scope: "client",
    what: "UTF-8 bytes of a session's name, labels and annotations together (keys and values), at create, Exec and Fork; more is RESOURCE_EXHAUSTED.",
    why: "Metadata is copied into every fork child and returned with every session; 16 KiB is generous for tags and notes and keeps a 128-child Fork response (2 MiB) within the 4 MiB a gRPC client accepts by default.",
  },
  listPageBytes: {
    default: 2 * MiB,
    unit: "bytes",
    scope: "client",
    what: "Encoded bytes of the sessions one ListSessions page returns; a page stops before the session that would pass it (it always holds at least one) and its next_page_token continues from there.",
    why: "A full page (500 sessions) with metadata at its 16 KiB limit would be 8 MiB, twice what a gRPC client accepts by default; 2 MiB leaves room for the rest of the response and costs a client only more pages.",
    min: 64 * KiB,
  },
  idChars: {
    default: 256,
    unit: "chars",
    scope: "client",
    what: "Length of any id a request names (session, execution, tool call); longer is INVALID_ARGUMENT before any lookup.",
    why: "Host ids are under 64 characters; the bound keeps hostile ids out of lookups, errors and log lines.",
  },
  forkBytes: {
    default: 256 * MiB,
    unit: "bytes",
    scope: "client",
    what: "Fork children × (the parent's journal bytes up to at_seq + its metadata bytes): what one Fork would write; more is RESOURCE_EXHAUSTED before any child is created.",
    why: "A fork copies the prefix into every child; without a product bound one request of 128 children of a large session wrote hundreds of MiB.",
  },
  // ── node: what a harness node may make the host wait for or do ──────────────────────────────────
  nodeCallMs: {
    default: 10_000,
    unit: "ms",
    scope: "node",
    what: "Deadline of one unary call to a harness node (Describe, NodeInfo, ListActors, DropActor); past it the call is DEADLINE_EXCEEDED, or UNAVAILABLE at admission.",
    why: "Long enough for a cold node on a loaded machine; short enough that a node that never answers fails an admission quickly instead of holding a session.",
    min: 10,
  },
  snapshotMs: {
    default: 30_000,
    unit: "ms",
    scope: "node",
    what: "Deadline of one snapshot transfer with a node (SnapshotActor, RestoreActor, RestoreActorWhole); past it the call is DEADLINE_EXCEEDED naming this limit — a missed every-turn checkpoint is skipped (the committed turn stands), a Suspend or Resume fails and writes nothing.",
    why: "A snapshot of the largest allowed size crosses loopback in well under a second and a slow link in seconds; 30 s bounds how long a silent node can hold a session after its turn committed.",
    min: 10,
  },
  historyUploadMs: {
    default: 60_000,
    unit: "ms",
    scope: "node",
    what: "Deadline of one history upload to a node (PutHistory: a stateless session's full history, sent before its turn when the node no longer holds it and it is larger than one Start frame should carry); past it the upload is DEADLINE_EXCEEDED naming this limit: the harness never sees the turn, which is journaled as interrupted (ERROR DEADLINE_EXCEEDED) and stays resumable.",
    why: "A history is bounded by storage, not by a message, so it can be far larger than a snapshot; 60 s moves a few GiB over loopback and hundreds of MiB over a slow link, and bounds how long a node that never answers the upload holds a session before its turn has begun.",
    min: 10,
  },
  eventBytes: {
    default: 2 * MiB,
    unit: "bytes",
    scope: "node",
    what: "Largest encoded Event a node may send on a turn's stream; a larger one fails the turn RESOURCE_EXHAUSTED before it is decoded or journaled.",
    why: "Every journaled record must stay readable by a client with gRPC's default 4 MiB receive limit, wrapped in its LogRecord; 2 MiB still carries a model request of about half a million tokens.",
    min: 64 * KiB,
  },
  turnEvents: {
    default: 10_000,
    unit: "count",
    scope: "node",
    what: "Events a node may send in one turn; the next one fails the turn RESOURCE_EXHAUSTED before it is journaled.",
    why: "Each event is a journal record or a host call; an agent turn of hundreds of steps stays far below, while one node turn once made the host store 20,000 records.",
  },
  turnBytes: {
    default: 64 * MiB,
    unit: "bytes",
    scope: "node",
    what: "Encoded bytes of all Events a node sends in one turn; past it the turn fails RESOURCE_EXHAUSTED before the event that crossed it is journaled.",
    why: "Bounds what one turn adds to the journal and to every later history of a stateless session; 64 MiB is many long model requests.",
    min: 64 * KiB,
  },
  turnModelCalls: {
    default: 256,
    unit: "count",
    scope: "node",
    what: "Model calls a node may ask for in one turn; the next one fails the turn RESOURCE_EXHAUSTED before it is journaled or sent to the provider.",
    why: "Each call costs real money at the provider; a tool-using agent turn of a few dozen steps fits many times over.",
  },
  turnToolCalls: {
    default: 1024,
    unit: "count",
    scope: "node",
    what: "Host-executed tool calls (TOOL_CALL, approvals and questions included) a node may make in one turn; the next one fails the turn RESOURCE_EXHAUSTED before it is journaled or run.",
    why: "Each call is a write-ahead record and an executor run; four times the model-call bound leaves room for parallel calls per step.",
  },
  snapshotBytes: {
    default: 64 * MiB,
    unit: "bytes",
    scope: "node",
    what: "Largest actor snapshot a node may send; a larger SnapshotActor stream is cancelled RESOURCE_EXHAUSTED (a checkpoint is skipped, a Suspend fails and writes nothing).",
    why: "A snapshot is held whole in host memory while it is hashed and stored, and restored on every resume; 64 MiB is a very large actor state.",
    min: SNAPSHOT_CHUNK_MIN,
  },
  vmSnapshotBytes: {
    default: 512 * MiB,
    unit: "bytes",
    scope: "node",
    what: "Largest compressed whole-VM snapshot of one session's guest (vm runtime); the migration stream is cut off once it crosses the bound and the snapshot is RESOURCE_EXHAUSTED naming this limit — the guest runs on, a checkpoint is skipped, a Suspend or Fork fails and writes nothing.",
    why: "The blob is read whole into host memory to be hashed and stored, and read again on every restore; 512 MiB is above an uncompressed snapshot of the default 192 MB guest (a typical one is ~36 MB with zstd), so only a guest that grew its RAM far past its image's size is refused.",
    min: SNAPSHOT_CHUNK_MIN,
  },
  vmSnapshotMs: {
    default: 120_000,
    unit: "ms",
    scope: "node",
    what: "Deadline of one whole-VM snapshot of a session's guest (vm runtime: stop, migrate through zstd, resume the guest); past it the migration is cancelled, the guest runs on and the snapshot is DEADLINE_EXCEEDED naming this limit — a checkpoint is skipped, a Suspend or Fork fails and writes nothing.",
    why: "Under software emulation (TCG) on a loaded 2-core host a 192 MB guest's snapshot took 1.6 s and spiked past 20 s; 120 s bounds how long a migration that hangs (a wedged QEMU, a full disk) can hold its session, while never cutting off a slow one that is still moving.",
    min: 10,
  },
  vmGuests: {
    default: 16,
    unit: "count",
    scope: "node",
    what: "QEMU guests one vm harness runs at once (one per live session, plus restores and fork children being started); a turn, resume or fork that would start one more fails RESOURCE_EXHAUSTED naming this limit before the guest starts — suspend a session (its guest stops, its RAM is kept in the snapshot) to make room.",
    why: "A guest costs 200-400 MB of host RAM and a QEMU process; sixteen stay well inside an ordinary host, while without a bound every live session of a vm harness held a guest however many there were.",
  },
  // ── lifecycle: how long the host lets work run ───────────────────────────────────────────────────
  turnMs: {
    default: 30 * 60_000,
    unit: "ms",
    scope: "lifecycle",
    what: "Deadline of one turn (an Exec or Resume turn, and each turn a Replay re-executes), in process or on a node, from its start to its END; past it the turn is over even if the harness ignores its signal: it is journaled as a DEADLINE_EXCEEDED ERROR, stays resumable, and Exec (or Replay) fails DEADLINE_EXCEEDED.",
    why: "An agent turn of a hundred model and tool calls at tens of seconds each fits in 30 minutes; a node whose turn never ends is cut there instead of holding its session for ever.",
    min: 10,
  },
  drainMs: {
    default: 10_000,
    unit: "ms",
    scope: "lifecycle",
    what: "On SIGTERM/SIGINT, how long in-flight calls get to finish after the listeners stop accepting; then they are cancelled (their turns stay resumable), nodes are stopped, and the process exits — at the latest SHUTDOWN_FORCE_MS (5 s) after this, with exit status 1 if anything still held it.",
    why: "Ten seconds lets a turn between two model calls commit; with the 5 s of force it fits Kubernetes' default 30 s termination grace period with room to spare.",
    min: 0,
  },
  // ── memory: byte budgets of the host's caches and per-client buffers ─────────────────────────────
  historyCacheBytes: {
    default: 64 * MiB,
    unit: "bytes",
    scope: "memory",
    what: "Encoded bytes of the prior events the host caches for stateless turns (each session's Start.history window: the events after its newest compaction), over all sessions; past it the least recently used sessions are dropped (re-read from the window's start when next needed).",
    why: "The cache saves re-reading a long session each turn; a byte budget (not a session count) keeps large sessions from growing RSS without bound.",
    min: 0,
  },
  recordCacheBytes: {
    default: 64 * MiB,
    unit: "bytes",
    scope: "memory",
    what: "Bytes the host caches for suspend, resume, approvals and recovery, over all sessions: each session's lean projection (about 290 bytes per completed turn, plus the pending turn's encoded inputs and effects) and its newest records (from its last END, at most 1,024); past it the least recently used sessions are dropped.",
    why: "As historyCacheBytes: operations cost only the new records while a session stays cached, and memory stays bounded by bytes.",
    min: 0,
  },
  streamBufferBytes: {
    default: 8 * MiB,
    unit: "bytes",
    scope: "memory",
    what: "Encoded bytes of Exec updates waiting for one client that is not reading fast enough; past it they are dropped and the stream ends RESOURCE_EXHAUSTED when the client reads again (the turn goes on, commits, and Replay returns its records).",
    why: "A client that never reads must not make the host hold its turn in memory or wedge its session; 8 MiB is above what an ordinary turn streams at once, and the server writes one message at a time, so this is most of what a stalled client can hold.",
    min: 64 * KiB,
  },
  turnsPerStream: {
    default: 64,
    unit: "count",
    scope: "client",
    what: "Turns of one turn stream (harnesshost.v1.Turns/Exec, docs/protocol.md §21) in flight at once, counting a turn until its answer was taken for writing; more are answered RESOURCE_EXHAUSTED without running.",
    why: "A turn stream multiplexes turns, so one client could otherwise start any number at once; and a client that stops reading holds at most this many answers in the host. 64 is far above what one client's sequential or fan-out use needs.",
    min: 1,
  },
  streamBufferTotalBytes: {
    default: 128 * MiB,
    unit: "bytes",
    scope: "memory",
    what: "Encoded bytes of Exec updates waiting for clients that are not reading, over all streams of the host; past it the stream holding the most is cut off as for streamBufferBytes (RESOURCE_EXHAUSTED naming this limit; its turn goes on and commits).",
    why: "streamBufferBytes bounds one stream, not how many stall at once: without a total, 100 stalled clients could hold 800 MiB. 128 MiB is sixteen fully stalled streams; a client that reads holds next to nothing, so the one cut is the one furthest behind.",
    min: 64 * KiB,
  },
  localActors: {
    default: 10_000,
    unit: "count",
    scope: "memory",
    what: "Harness instances the in-process (local) runtime keeps, one per session that ran a turn; past it the least recently used is dropped and made afresh at its next turn.",
    why: "Local harnesses are stateless (the journal is their state; a memory-tier harness is never placed locally), so dropping one loses nothing; counted, not measured, because an instance's size is the harness's own.",
  },
  logFieldChars: {
    default: 128,
    unit: "chars",
    scope: "memory",
    what: "Longest id or name written whole on a log line; longer ones are cut and marked with their full length.",
    why: "Log lines are bounded; a hostile id must not make one line megabytes long.",
    min: 16,
  },
} as const satisfies Record<string, LimitSpec>;
