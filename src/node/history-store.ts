// A node's cache of the full Start.history it reconstructed per session, keyed by a host-chosen token
// (docs/protocol.md §8.8). Invariant: a tail is accepted only onto an entry with exactly the token and
// event count the host names, so the history a harness sees always equals what a full send carries;
// anything else is refused before the turn runs. Bounded: least recently used sessions are evicted
// while more than `maxSessions` entries or `maxEvents` events in total are held.
import type { Event } from "../gen/agentsessions/v1/common_pb.js";
import type { Metadata } from "@grpc/grpc-js";
import { ErrorCode, HostError } from "../errors/index.js";
import { staleHistory, type HistoryRequest } from "./history-headers.js";
import { HISTORY_CACHE_MAX_EVENTS, HISTORY_CACHE_MAX_SESSIONS } from "./limits.js";

export interface HistoryStoreLimits {
  /** Sessions whose history is held at once. */
  readonly maxSessions?: number;
  /** Decoded events held over all sessions (one session longer than this is not held at all). */
  readonly maxEvents?: number;
}

interface Entry {
  readonly token: string;
  /** Owned by the store; appended to in place when a tail is accepted. */
  readonly events: Event[];
}

/** The history a turn runs with, and how many events the node now holds for the next tail (0: none). */
export interface ResolvedHistory {
  readonly history: readonly Event[];
  readonly held: number;
}

export class HistoryStore {
  /** Map order is recency order: the first key is the least recently used. */
  readonly #entries = new Map<string, Entry>();
  readonly #maxSessions: number;
  readonly #maxEvents: number;
  #total = 0;

  constructor(limits: HistoryStoreLimits = {}) {
    this.#maxSessions = limits.maxSessions ?? HISTORY_CACHE_MAX_SESSIONS;
    this.#maxEvents = limits.maxEvents ?? HISTORY_CACHE_MAX_EVENTS;
    if (!(this.#maxSessions >= 1 && this.#maxEvents >= 1)) {
      throw new HostError(
        ErrorCode.InvalidArgument,
        "history cache limits must be at least 1 (disable the cache instead)",
      );
    }
  }

  /** Events held over all sessions (diagnostics and tests). */
  get totalEvents(): number {
    return this.#total;
  }

  /** Sessions held (diagnostics and tests). */
  get size(): number {
    return this.#entries.size;
  }

  /**
   * The full history of a Start whose frame carried `sent`. A tail the store cannot extend fails with
   * the stale-history refusal (FAILED_PRECONDITION, trailer set on `trailers`); nothing changes then.
   * The caller must hold the session's actor idle across this call and the turn (arrays are shared).
   */
  resolve(session: string, sent: readonly Event[], request: HistoryRequest, trailers: Metadata): ResolvedHistory {
    if (request.kind === "none" || session === "") {
      if (request.kind === "tail") throw staleHistory(trailers, "a tail needs a session");
      return { history: sent, held: 0 };
    }
    if (request.kind === "full") {
      this.drop(session);
      const events = [...sent];
      if (events.length > this.#maxEvents) return { history: events, held: 0 };
      this.#put(session, { token: request.token, events });
      return { history: events, held: events.length };
    }
    const entry = this.#entries.get(session);
    if (entry === undefined) throw staleHistory(trailers, `node holds no history for session ${session}`);
    if (entry.token !== request.token)
      throw staleHistory(trailers, `node holds the history of session ${session} under another token`);
    if (entry.events.length !== request.base) {
      throw staleHistory(
        trailers,
        `node holds ${entry.events.length} events of session ${session}, the tail starts at ${request.base}`,
      );
    }
    this.#entries.delete(session);
    this.#total -= entry.events.length;
    for (const e of sent) entry.events.push(e);
    if (entry.events.length > this.#maxEvents) return { history: entry.events, held: 0 };
    this.#put(session, entry);
    return { history: entry.events, held: entry.events.length };
  }

  /**
   * Holds `events` as the session's full history under `token` (PutHistory, docs/protocol.md §8.10),
   * replacing what was held; resolves to the count held, 0 when they exceed the event bound (nothing
   * is held then). The array becomes the store's own.
   */
  hold(session: string, token: string, events: Event[]): number {
    this.drop(session);
    if (events.length > this.#maxEvents) return 0;
    this.#put(session, { token, events });
    return events.length;
  }

  /** The bound on events held over all sessions. */
  get maxEvents(): number {
    return this.#maxEvents;
  }

  /** Forgets the session's history (DropActor, RestoreActor). */
  drop(session: string): void {
    const entry = this.#entries.get(session);
    if (entry === undefined) return;
    this.#entries.delete(session);
    this.#total -= entry.events.length;
  }

  #put(session: string, entry: Entry): void {
    this.#entries.set(session, entry);
    this.#total += entry.events.length;
    for (const [key, old] of this.#entries) {
      if (this.#entries.size <= this.#maxSessions && this.#total <= this.#maxEvents) break;
      if (key === session) continue;
      this.#entries.delete(key);
      this.#total -= old.events.length;
    }
  }
}
