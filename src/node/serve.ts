// serveHarness: a harness node. Invariant: the node serves agentsessions.v1.Harness (and, unless told
// otherwise, harnesshost.v1.Actors) for one harness factory, hosting one actor per session; close()
// cancels running turns and stops the server. It reports incremental_history exactly when it serves
// Actors with a history cache (docs/protocol.md §8.8).
import { Server } from "@grpc/grpc-js";
import { Harness as HarnessService } from "../gen/agentsessions/v1/harness_pb.js";
import { Actors } from "../gen/harnesshost/v1/actors_pb.js";
import { ErrorCode, HostError } from "../errors/index.js";
import type { Harness, HarnessFactory } from "../harness/types.js";
import { addService, listen, widenServerWindows } from "../wire/index.js";
import { ActorTable } from "./actor-table.js";
import { actorsService } from "./actors-service.js";
import { connectHandler } from "./connect.js";
import { HistoryStore, type HistoryStoreLimits } from "./history-store.js";
import { HARNESS_MAX_RECEIVE_BYTES } from "./limits.js";
import type { NodeLogger } from "./logger.js";

export interface ServeHarnessOptions {
  /** `host:port` (port 0 picks one), `[v6]:port` or `unix:///path`. */
  readonly listen: string;
  /** Serve harnesshost.v1.Actors (snapshot/restore/drop/list). Default true. */
  readonly actors?: boolean;
  readonly logger?: NodeLogger;
  /** How long close() lets in-flight calls finish before cutting them. Default 2000 ms. */
  readonly closeGraceMs?: number;
  /**
   * Bounds of the incremental-history cache (docs/protocol.md §8.8); `false` keeps no history between
   * turns and reports incremental_history false. Default: the limits.ts bounds. Needs Actors.
   */
  readonly historyCache?: HistoryStoreLimits | false;
  /**
   * "sha256:<hex>" of the harness build served, reported in NodeInfo.build_digest (the host records it
   * with every turn, docs/versioning.md). Default "": unknown. `harnesshost node --harness FILE` sets it
   * to the entry file's digest.
   */
  readonly buildDigest?: string;
}

export interface HarnessNode {
  /** The dialable address (port 0 resolved). */
  readonly address: string;
  close(): Promise<void>;
}

export async function serveHarness(factory: HarnessFactory, opts: ServeHarnessOptions): Promise<HarnessNode> {
  const table = new ActorTable(factory);
  const actors = opts.actors !== false;
  const histories = actors && opts.historyCache !== false ? new HistoryStore(opts.historyCache ?? {}) : undefined;
  let probe: Harness | undefined;
  const server = new Server({ "grpc.max_receive_message_length": HARNESS_MAX_RECEIVE_BYTES });
  addService(server, HarnessService, {
    async describe() {
      probe ??= factory();
      return await probe.describe();
    },
    connect: connectHandler(table, histories, opts.logger),
  });
  if (actors) addService(server, Actors, actorsService(table, factory, histories, opts.buildDigest ?? ""));
  const address = await listen(server, opts.listen);
  // Snapshots and history uploads are bulk transfers: let them flow without 64 KiB window stalls.
  widenServerWindows(server);
  opts.logger?.info({ address, actors, incrementalHistory: histories !== undefined }, "harness node listening");
  let closing: Promise<void> | undefined;
  return {
    address,
    close() {
      closing ??= shutdown(server, table, opts.closeGraceMs ?? 2000);
      return closing;
    },
  };
}

function shutdown(server: Server, table: ActorTable, graceMs: number): Promise<void> {
  table.abortAll(new HostError(ErrorCode.Cancelled, "harness node shutting down"));
  return new Promise((resolve) => {
    const timer = setTimeout(() => server.forceShutdown(), graceMs);
    timer.unref();
    server.tryShutdown(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
