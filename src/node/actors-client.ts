// The host's view of a node's Actors service. Invariants: snapshot bytes are returned only when the
// trailer's sha256 and size match what arrived (else DATA_LOSS) — a snapshot a node wrote to a file
// beside the host returns the node's trailer, checked on every restore of the blob — and restores
// always send a trailer computed over exactly the bytes sent (or the blob's own name, for a file); every call has a deadline (NodeLimits: nodeCallMs for unary
// calls, snapshotMs for a snapshot transfer, historyUploadMs for a history upload), so a node that never answers cannot hold a caller, and a
// missed deadline is DEADLINE_EXCEEDED naming the limit; a snapshot larger than snapshotBytes is cut
// off (RESOURCE_EXHAUSTED) as soon as it crosses the bound. A call about one session is opened only
// after that session's last Connect stream to the same address has ended (stream-order.ts, §4.6 item 9).
import { createHash } from "node:crypto";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { Event } from "../gen/agentsessions/v1/common_pb.js";
import { Actors } from "../gen/harnesshost/v1/actors_pb.js";
import type {
  PutHistoryRequestSchema,
  RestoreActorRequestSchema,
  SnapshotTrailer,
} from "../gen/harnesshost/v1/actors_pb.js";
import { eventBytes } from "../wire/event-bytes.js";
import { ErrorCode, HostError } from "../errors/index.js";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { RpcError, bulkChannelOptions, createClient } from "../wire/index.js";
import type { CallOptions, MethodsOf, ServiceClient } from "../wire/index.js";
import { overLimit } from "../limits/index.js";
import {
  DEFAULT_NODE_LIMITS,
  HISTORY_CHUNK_BYTES,
  NODE_CHANNEL_OPTIONS,
  type NodeLimits,
  SNAPSHOT_CHUNK_BYTES,
  WHOLE_RESTORE_MAX_BYTES,
} from "./limits.js";
import { SESSION_STREAMS, type SessionStreams } from "./stream-order.js";

/** The codec the SDK's nodes write (src/snapshot/codec.ts ACTOR_CODEC). */
export const DEFAULT_ACTOR_CODEC = "v8/1";

export interface ActorsClientOptions {
  readonly address: string;
  readonly metadata?: Readonly<Record<string, string>>;
  /** Call deadlines; default DEFAULT_NODE_LIMITS. */
  readonly limits?: Pick<NodeLimits, DeadlineLimit | "snapshotBytes">;
  /** Whose ending streams a session's call waits for (§4.6 item 9); default the process's one SessionStreams (SESSION_STREAMS). */
  readonly streams?: SessionStreams;
}

type DeadlineLimit = "nodeCallMs" | "snapshotMs" | "historyUploadMs";

export interface ActorSummary {
  readonly session: string;
  readonly turns: number;
}

export interface NodeInfo {
  readonly pid: number;
  readonly incrementalHistory: boolean;
  readonly codecs: readonly string[];
  /** The node drops a named restored instance only (docs/protocol.md §8.5). */
  readonly instanceDrops: boolean;
  /** The node serves RestoreActorWhole (docs/protocol.md §8.9). */
  readonly wholeRestore: boolean;
  /** The node serves PutHistory (docs/protocol.md §8.10). */
  readonly historyUpload: boolean;
  /** The node restores from a local file the host names (RestoreActorWhole `file`, docs/protocol.md §8.9). */
  readonly restoreFromFile: boolean;
  /** The node writes a snapshot to a local file the host names (SnapshotActor `file`, docs/protocol.md §8.11). */
  readonly snapshotToFile: boolean;
  /** "sha256:<hex>" of the harness build the node serves; "" when it cannot say. */
  readonly buildDigest: string;
}

/** Uploads a session's full history into a node's history cache (docs/protocol.md §8.10). */
export interface HistoryUploader {
  /** Resolves to the count the node holds under `token` (the whole upload). */
  putHistory(
    session: string,
    token: string,
    events: readonly Event[],
    opts?: { signal?: AbortSignal },
  ): Promise<number>;
}

export interface ActorSnapshot {
  readonly bytes: Uint8Array;
  readonly sha256: string;
  readonly codec: string;
}

/** A snapshot the node wrote to a file (ActorsClient.snapshotToFile): the node's trailer. */
export interface FileSnapshot {
  /** Hex sha256 the node computed over the bytes it wrote. */
  readonly sha256: string;
  readonly size: number;
  readonly codec: string;
}

interface Call {
  readonly signal?: AbortSignal;
}

interface RestoreOptions extends Call {
  readonly replace?: boolean;
  readonly codec?: string;
  readonly instance?: string;
}

/** A stored snapshot as a file on the node's machine (see ActorsClient.restoreFile). */
export interface SnapshotFile {
  /** Absolute path. */
  readonly path: string;
  readonly size: number;
  /** Hex sha256 the bytes must hash to (the blob's content address). */
  readonly sha256: string;
}

export class ActorsClient implements HistoryUploader {
  readonly address: string;
  readonly #client: ServiceClient<MethodsOf<typeof Actors>>;
  /** Set by the node's NodeInfo answer (and cleared if the node ever answers UNIMPLEMENTED to it). */
  #wholeRestore = false;
  readonly #limits: Pick<NodeLimits, DeadlineLimit | "snapshotBytes">;
  readonly #streams: SessionStreams;

  constructor(opts: ActorsClientOptions) {
    this.address = opts.address;
    this.#streams = opts.streams ?? SESSION_STREAMS;
    this.#limits = opts.limits ?? DEFAULT_NODE_LIMITS;
    this.#client = createClient(Actors, opts.address, {
      channelOptions: { ...NODE_CHANNEL_OPTIONS, ...bulkChannelOptions() },
      ...(opts.metadata !== undefined ? { metadata: opts.metadata } : {}),
    });
  }

  /** The actor's state bytes (see snapshotWithTrailer for the digest and codec). */
  async snapshot(session: string, opts: Call = {}): Promise<Uint8Array> {
    return (await this.snapshotWithTrailer(session, opts)).bytes;
  }

  async snapshotWithTrailer(session: string, opts: Call = {}): Promise<ActorSnapshot> {
    return this.#bounded("SnapshotActor", "snapshotMs", opts, (o) => this.#snapshot(session, o), session);
  }

  /** RESOURCE_EXHAUSTED for a snapshot of `size` bytes past snapshotBytes (streamed or written to a file). */
  #snapshotTooLarge(session: string, size: number): HostError {
    return overLimit("snapshotBytes", this.#limits.snapshotBytes, size, `snapshot of ${session} from ${this.address}`);
  }

  async #snapshot(session: string, opts: CallOptions): Promise<ActorSnapshot> {
    const chunks: Uint8Array[] = [];
    const hash = createHash("sha256");
    let size = 0;
    let trailer: SnapshotTrailer | undefined;
    for await (const msg of this.#client.snapshotActor({ session }, opts)) {
      if (trailer !== undefined) throw dataLoss(`snapshot of ${session}: data after the trailer`);
      switch (msg.chunk.case) {
        case "data":
          size += msg.chunk.value.length;
          // Leaving the loop cancels the stream: nothing more of it is received.
          if (size > this.#limits.snapshotBytes) throw this.#snapshotTooLarge(session, size);
          chunks.push(msg.chunk.value);
          hash.update(msg.chunk.value);
          break;
        case "trailer":
          trailer = msg.chunk.value;
          break;
        case undefined:
          throw dataLoss(`snapshot of ${session}: empty chunk`);
        default: {
          const exhaustive: never = msg.chunk;
          throw dataLoss(`snapshot of ${session}: unknown chunk ${String(exhaustive)}`);
        }
      }
    }
    if (trailer === undefined) throw dataLoss(`snapshot of ${session}: stream ended without a trailer`);
    const digest = hash.digest("hex");
    if (digest !== trailer.sha256 || BigInt(size) !== trailer.size) {
      throw dataLoss(
        `snapshot of ${session}: got ${size} bytes sha256:${digest}, trailer says ${trailer.size} bytes sha256:${trailer.sha256}`,
      );
    }
    return { bytes: concat(chunks, size), sha256: digest, codec: trailer.codec };
  }

  /**
   * Has the node write the actor's state to a new file at `path` (absolute, on the node's machine, not
   * existing yet) and fsync it; resolves to the node's trailer. Only for a node on this machine that
   * reported snapshotToFile. The digest is the node's, over the bytes it wrote: nothing crossed a wire
   * to check it against, so it is checked where the bytes are used (every restore checks the blob
   * against its name). A snapshot larger than snapshotBytes is RESOURCE_EXHAUSTED (the file is the
   * caller's to remove). Data on the stream is DATA_LOSS.
   */
  async snapshotToFile(session: string, path: string, opts: Call = {}): Promise<FileSnapshot> {
    return this.#bounded(
      "SnapshotActor",
      "snapshotMs",
      opts,
      async (o) => {
        let trailer: SnapshotTrailer | undefined;
        for await (const msg of this.#client.snapshotActor({ session, file: path }, o)) {
          if (msg.chunk.case !== "trailer" || trailer !== undefined)
            throw dataLoss(`snapshot of ${session} to ${path}: the stream must carry only one trailer`);
          trailer = msg.chunk.value;
        }
        if (trailer === undefined) throw dataLoss(`snapshot of ${session} to ${path}: stream ended without a trailer`);
        const size = Number(trailer.size);
        if (size > this.#limits.snapshotBytes) throw this.#snapshotTooLarge(session, size);
        return { sha256: trailer.sha256, size, codec: trailer.codec };
      },
      session,
    );
  }

  /** Installs an actor from snapshot bytes; resolves to the size the node restored. */
  async restore(
    session: string,
    bytes: Uint8Array,
    opts: RestoreOptions & {
      /** The hex sha256 of `bytes` when the caller verified it already (a store read): not hashed again. */
      readonly sha256?: string;
    } = {},
  ): Promise<number> {
    const sha256 = opts.sha256 ?? createHash("sha256").update(bytes).digest("hex");
    const codec = opts.codec ?? DEFAULT_ACTOR_CODEC;
    const header = { session, replace: opts.replace ?? false, instance: opts.instance ?? "" };
    const trailer = { sha256, size: BigInt(bytes.length), codec };
    async function* frames(): AsyncGenerator<MessageInitShape<typeof RestoreActorRequestSchema>> {
      yield { item: { case: "header", value: header } };
      for (let offset = 0; offset < bytes.length; offset += SNAPSHOT_CHUNK_BYTES) {
        yield {
          item: {
            case: "chunk",
            value: { chunk: { case: "data", value: bytes.subarray(offset, offset + SNAPSHOT_CHUNK_BYTES) } },
          },
        };
      }
      yield {
        item: {
          case: "chunk",
          value: { chunk: { case: "trailer", value: trailer } },
        },
      };
    }
    if (this.#wholeRestore && bytes.length <= WHOLE_RESTORE_MAX_BYTES) {
      // One unary call instead of a header/data/trailer stream: same checks and effect on the node.
      try {
        const res = await this.#bounded(
          "RestoreActorWhole",
          "snapshotMs",
          opts,
          (o) => this.#client.restoreActorWhole({ header, data: bytes, trailer }, o),
          session,
        );
        return Number(res.size);
      } catch (err) {
        // UNIMPLEMENTED: the handler never ran (e.g. an older node now answers at this address).
        if (!(err instanceof RpcError && err.grpcCode === GrpcStatus.UNIMPLEMENTED)) throw err;
        this.#wholeRestore = false;
      }
    }
    const res = await this.#bounded(
      "RestoreActor",
      "snapshotMs",
      opts,
      (o) => this.#client.restoreActor(frames(), o),
      session,
    );
    return Number(res.size);
  }

  /**
   * Installs an actor from a snapshot file the node reads itself (one RestoreActorWhole naming the file,
   * no snapshot bytes on the wire); resolves to the size the node restored. Only for a node on this
   * machine that reported restoreFromFile: the node checks the file's size and sha256 against `file`
   * before installing anything (docs/protocol.md §8.9).
   */
  async restoreFile(session: string, file: SnapshotFile, opts: RestoreOptions = {}): Promise<number> {
    const header = { session, replace: opts.replace ?? false, instance: opts.instance ?? "" };
    const trailer = { sha256: file.sha256, size: BigInt(file.size), codec: opts.codec ?? DEFAULT_ACTOR_CODEC };
    const res = await this.#bounded(
      "RestoreActorWhole",
      "snapshotMs",
      opts,
      (o) => this.#client.restoreActorWhole({ header, file: file.path, trailer }, o),
      session,
    );
    return Number(res.size);
  }

  /**
   * Whether the node removed an actor for the session (a running turn is cancelled). With `instance`,
   * only that restored instance is removed (on a node reporting instanceDrops).
   */
  async drop(session: string, opts: Call & { readonly instance?: string } = {}): Promise<boolean> {
    const res = await this.#bounded(
      "DropActor",
      "nodeCallMs",
      opts,
      (o) => this.#client.dropActor({ session, instance: opts.instance ?? "" }, o),
      session,
    );
    return res.dropped;
  }

  async list(opts: Call = {}): Promise<readonly ActorSummary[]> {
    const res = await this.#bounded("ListActors", "nodeCallMs", opts, (o) => this.#client.listActors({}, o));
    return res.actors.map((a) => ({ session: a.session, turns: Number(a.turns) }));
  }

  async nodeInfo(opts: Call = {}): Promise<NodeInfo> {
    const res = await this.#bounded("NodeInfo", "nodeCallMs", opts, (o) => this.#client.nodeInfo({}, o));
    this.#wholeRestore = res.wholeRestore;
    return {
      pid: Number(res.pid),
      incrementalHistory: res.incrementalHistory,
      codecs: res.codecs,
      instanceDrops: res.instanceDrops,
      wholeRestore: res.wholeRestore,
      historyUpload: res.historyUpload,
      restoreFromFile: res.restoreFromFile,
      snapshotToFile: res.snapshotToFile,
      buildDigest: res.buildDigest,
    };
  }

  /**
   * Streams the events to the node's PutHistory in messages of about HISTORY_CHUNK_BYTES each, under
   * its own deadline, historyUploadMs (a history is bounded by storage, not by the snapshot bound).
   */
  async putHistory(session: string, token: string, events: readonly Event[], opts: Call = {}): Promise<number> {
    async function* messages(): AsyncGenerator<MessageInitShape<typeof PutHistoryRequestSchema>> {
      let chunk: Event[] = [];
      let bytes = 0;
      let first = true;
      for (const e of events) {
        const n = eventBytes(e);
        if (chunk.length > 0 && bytes + n > HISTORY_CHUNK_BYTES) {
          yield { ...(first ? { header: { session, token } } : {}), events: chunk };
          first = false;
          chunk = [];
          bytes = 0;
        }
        chunk.push(e);
        bytes += n;
      }
      yield { ...(first ? { header: { session, token } } : {}), events: chunk };
    }
    const res = await this.#bounded(
      "PutHistory",
      "historyUploadMs",
      opts,
      (o) => this.#client.putHistory(messages(), o),
      session,
    );
    return Number(res.held);
  }

  close(): void {
    this.#client.close();
  }

  /**
   * Runs one call under the limit's deadline; a missed deadline names the call and the limit. A call
   * about `session` first waits for the session's last Connect stream to end (bounded by
   * END_CLOSE_WAIT_MS, §4.6 item 9; the call's own signal still cancels the wait).
   */
  async #bounded<T>(
    rpc: string,
    limit: DeadlineLimit,
    opts: Call,
    run: (o: CallOptions) => Promise<T>,
    session?: string,
  ): Promise<T> {
    if (session !== undefined) await this.#streams.ended(this.address, session, opts.signal);
    const ms = this.#limits[limit];
    try {
      return await run({ ...(opts.signal !== undefined ? { signal: opts.signal } : {}), timeoutMs: ms });
    } catch (err) {
      if (!(err instanceof RpcError && err.grpcCode === GrpcStatus.DEADLINE_EXCEEDED)) throw err;
      throw new RpcError(
        GrpcStatus.DEADLINE_EXCEEDED,
        `${rpc} at ${this.address} did not finish within ${limit}=${ms} ms (${err.details})`,
        err.metadata,
        { cause: err },
      );
    }
  }
}

function concat(chunks: readonly Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.length;
  }
  return out;
}

function dataLoss(message: string): HostError {
  return new HostError(ErrorCode.DataLoss, message);
}
