// harnesshost.v1.Actors on a node: snapshot, restore, drop and list the node's actors. Invariant: a
// snapshot is streamed as 1 MiB chunks plus a sha256 trailer (or written to the file the host names,
// fsynced, and only the trailer streamed), and a restore (streamed, whole in one
// message, or read from a file the host names) installs nothing unless all its bytes arrived with a
// matching digest and size and decoded cleanly. Dropping or restoring an
// actor also forgets the history the node held for its session (docs/protocol.md §8.8); PutHistory
// replaces it with an uploaded full history (§8.10), never while the session's actor is mid-turn.
import { createHash } from "node:crypto";
import type { Event } from "../gen/agentsessions/v1/common_pb.js";
import type { RestoreActorHeader, SnapshotTrailer, Actors, PutHistoryHeader } from "../gen/harnesshost/v1/actors_pb.js";
import { ErrorCode, HostError, invalidArgument as invalid } from "../errors/index.js";
import type { Harness, HarnessFactory } from "../harness/types.js";
import { ACTOR_CODEC, decodeActor, encodeActor, type StateTag } from "../snapshot/codec.js";
import type { MethodsOf, ServiceImpl } from "../wire/index.js";
import { snapshotClassesOf } from "./actor-table.js";
import { SNAPSHOT_CHUNK_BYTES } from "./limits.js";
import { readSnapshotFile, writeSnapshotFile } from "./snapshot-file.js";
import type { ActorTable } from "./actor-table.js";
import type { HistoryStore } from "./history-store.js";

export const NODE_CODECS: readonly string[] = [ACTOR_CODEC];

/** The tag this node's code stamps on its snapshots: its Describe version and state schema. */
export async function stateTagOf(harness: Harness): Promise<StateTag> {
  const version = (await harness.describe()).version;
  return { version, schema: harness.stateSchema ?? version };
}

export function actorsService(
  table: ActorTable,
  factory: HarnessFactory,
  histories?: HistoryStore,
  buildDigest = "",
): ServiceImpl<MethodsOf<typeof Actors>> {
  let tag: Promise<StateTag> | undefined;
  /** Describe must not depend on a session (docs/protocol.md §3): one probe answers for the node. */
  const nodeTag = (): Promise<StateTag> => {
    tag ??= stateTagOf(factory());
    return tag;
  };
  function checkHeader(header: RestoreActorHeader): void {
    if (header.session === "") throw invalid("RestoreActor header needs a session");
    if (table.has(header.session) && !header.replace) {
      throw new HostError(ErrorCode.AlreadyExists, `actor for session ${header.session} already exists`);
    }
  }

  /** Installs the actor the bytes decode to, if their digest and size match the trailer and the codec is known. */
  async function install(header: RestoreActorHeader, bytes: Uint8Array, digest: string, trailer: SnapshotTrailer) {
    if (BigInt(bytes.length) !== trailer.size || digest !== trailer.sha256) {
      throw new HostError(
        ErrorCode.DataLoss,
        `snapshot digest mismatch: got ${bytes.length} bytes sha256:${digest}, trailer says ${trailer.size} bytes sha256:${trailer.sha256}`,
      );
    }
    if (!NODE_CODECS.includes(trailer.codec)) {
      throw new HostError(ErrorCode.FailedPrecondition, `unsupported snapshot codec ${JSON.stringify(trailer.codec)}`);
    }
    const fresh = factory();
    const want = await nodeTag();
    let restored: typeof fresh;
    try {
      restored = decodeActor(bytes, fresh, {
        classes: snapshotClassesOf(fresh),
        tag: want,
        ...(fresh.migrate ? { migrate: fresh.migrate.bind(fresh) } : {}),
      });
    } catch (err) {
      if (err instanceof HostError) throw err;
      throw new HostError(
        ErrorCode.DataLoss,
        `snapshot does not decode: ${err instanceof Error ? err.message : String(err)}`,
        {
          cause: err,
        },
      );
    }
    table.install(header.session, restored, header.replace, header.instance);
    histories?.drop(header.session);
    return { session: header.session, size: BigInt(bytes.length) };
  }

  return {
    async *snapshotActor(req) {
      const actor = table.idle(req.session);
      const bytes = encodeActor(actor.harness, { classes: snapshotClassesOf(actor.harness), tag: await nodeTag() });
      if (req.file !== "") {
        // Written beside the host instead of streamed: only the trailer travels (§8.11).
        const sha256 = await writeSnapshotFile(req.file, bytes);
        yield { chunk: { case: "trailer", value: { sha256, size: BigInt(bytes.length), codec: ACTOR_CODEC } } };
        return;
      }
      const sha256 = createHash("sha256").update(bytes).digest("hex");
      for (let offset = 0; offset < bytes.length; offset += SNAPSHOT_CHUNK_BYTES) {
        yield { chunk: { case: "data", value: bytes.subarray(offset, offset + SNAPSHOT_CHUNK_BYTES) } };
      }
      yield { chunk: { case: "trailer", value: { sha256, size: BigInt(bytes.length), codec: ACTOR_CODEC } } };
    },

    async restoreActor(requests) {
      let header: RestoreActorHeader | undefined;
      let trailer: SnapshotTrailer | undefined;
      const chunks: Uint8Array[] = [];
      const hash = createHash("sha256");
      let size = 0;
      for await (const req of requests) {
        switch (req.item.case) {
          case "header":
            if (header !== undefined) throw invalid("duplicate RestoreActor header");
            header = req.item.value;
            checkHeader(header);
            break;
          case "chunk": {
            if (header === undefined) throw invalid("RestoreActor header must come first");
            if (trailer !== undefined) throw invalid("snapshot data after the trailer");
            const chunk = req.item.value.chunk;
            switch (chunk.case) {
              case "data":
                chunks.push(chunk.value);
                hash.update(chunk.value);
                size += chunk.value.length;
                break;
              case "trailer":
                trailer = chunk.value;
                break;
              case undefined:
                throw invalid("empty snapshot chunk");
              default: {
                const exhaustive: never = chunk;
                throw invalid(`unknown snapshot chunk ${String(exhaustive)}`);
              }
            }
            break;
          }
          case undefined:
            throw invalid("empty RestoreActor request");
          default: {
            const exhaustive: never = req.item;
            throw invalid(`unknown RestoreActor item ${String(exhaustive)}`);
          }
        }
      }
      if (header === undefined) throw invalid("RestoreActor stream without a header");
      if (trailer === undefined) throw new HostError(ErrorCode.DataLoss, "snapshot stream ended without a trailer");
      return install(header, concat(chunks, size), hash.digest("hex"), trailer);
    },

    async restoreActorWhole(req) {
      const header = req.header;
      if (header === undefined) throw invalid("RestoreActorWhole needs a header");
      checkHeader(header);
      const trailer = req.trailer;
      if (trailer === undefined) throw new HostError(ErrorCode.DataLoss, "RestoreActorWhole without a trailer");
      if (req.file !== "" && req.data.length > 0) throw invalid("RestoreActorWhole carries data or a file, not both");
      const bytes = req.file === "" ? req.data : await readSnapshotFile(req.file, trailer);
      return install(header, bytes, createHash("sha256").update(bytes).digest("hex"), trailer);
    },

    dropActor(req) {
      const dropped = table.drop(req.session, req.instance);
      // A drop naming an instance that is no longer there (a newer restore won) leaves the session alone.
      if (dropped || req.instance === "") histories?.drop(req.session);
      return { dropped };
    },

    listActors() {
      return { actors: table.list().map((a) => ({ session: a.session, turns: BigInt(a.turns) })) };
    },

    nodeInfo() {
      return {
        pid: BigInt(process.pid),
        incrementalHistory: histories !== undefined,
        codecs: [...NODE_CODECS],
        instanceDrops: true,
        wholeRestore: true,
        restoreFromFile: true,
        snapshotToFile: true,
        historyUpload: histories !== undefined,
        buildDigest,
      };
    },

    async putHistory(requests) {
      if (histories === undefined)
        throw new HostError(ErrorCode.FailedPrecondition, "this node keeps no history between turns");
      let header: PutHistoryHeader | undefined;
      const events: Event[] = [];
      for await (const req of requests) {
        if (header === undefined) {
          header = req.header;
          if (header === undefined) throw invalid("PutHistory header must come first");
          if (header.session === "") throw invalid("PutHistory header needs a session");
          if (!/^[0-9a-f]{32}$/.test(header.token)) throw invalid("history token must be 32 lowercase hex digits");
        } else if (req.header !== undefined) throw invalid("duplicate PutHistory header");
        for (const e of req.events) events.push(e);
        if (events.length > histories.maxEvents) {
          throw new HostError(
            ErrorCode.ResourceExhausted,
            `history of session ${header.session} exceeds this node's history cache bound of ${histories.maxEvents} events`,
          );
        }
      }
      if (header === undefined) throw invalid("PutHistory stream without a header");
      // The history a running turn holds is never replaced under it (§4.9).
      table.assertNotBusy(header.session);
      return { held: BigInt(histories.hold(header.session, header.token, events)) };
    },
  };
}

function concat(chunks: readonly Uint8Array[], size: number): Uint8Array {
  if (chunks.length === 1 && chunks[0] !== undefined) return chunks[0];
  const out = new Uint8Array(size);
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.length;
  }
  return out;
}
