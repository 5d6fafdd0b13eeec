// The turns this host is running, by session, and how to cancel each (docs/protocol.md §17). Invariants:
// a turn is registered for exactly as long as its operation holds the session, so `settled` resolves only
// once the session is free again; a cancel — from this host's Cancel or a cross-host request heard on
// the journal — aborts the turn's signal with a CANCELLED HostError naming the reason, and reaches no
// other turn. Cross-host requests are subscribed to lazily, on the first turn a shared journal runs.
import { followAbort } from "../abort.js";
import { TurnCancelled } from "../controller/turn-cancelled.js";
import type { HostError } from "../errors/index.js";
import type { IdentityRef } from "../gen/agentsessions/v1/common_pb.js";
import type { Journal } from "../journal/types.js";
import { SessionWatchers } from "./session-watchers.js";

interface Running {
  readonly controller: AbortController;
  readonly settled: Promise<void>;
}

/** A registered turn: its signal (aborted by a cancel) and `done`, to run once the session is released. */
export interface TurnHandle {
  readonly signal: AbortSignal;
  done(): void;
}

/** The CANCELLED error a cancelled turn's signal carries (its ERROR record describes it and names `by`). */
export function cancelError(reason: string, by?: IdentityRef): HostError {
  return new TurnCancelled(reason, by);
}

export class RunningTurns {
  private readonly turns = new Map<string, Running>();
  /** Callbacks run when a session's next turn registers (Cancel waiting for a turn's hold to become a turn). */
  private readonly watchers = new SessionWatchers();
  private subscribed: Promise<unknown> | undefined;

  constructor(private readonly journal: Journal) {}

  /** Registers the session's turn; its signal also follows `outer`. */
  start(session: string, outer: AbortSignal): TurnHandle {
    this.listen();
    const controller = new AbortController();
    let done!: () => void;
    const settled = new Promise<void>((resolve) => (done = resolve));
    const entry = { controller, settled };
    this.turns.set(session, entry);
    this.watchers.fire(session);
    // The turn's signal is the controller's, following `outer` through a listener removed at `done`
    // (not AbortSignal.any([outer, controller.signal]): one signal less per turn, same reasons).
    const unfollow = followAbort(outer, controller);
    return {
      signal: controller.signal,
      done: () => {
        unfollow();
        if (this.turns.get(session) === entry) this.turns.delete(session);
        done();
      },
    };
  }

  /** Runs `onStart` when the session's next turn registers; returns the function that stops watching. */
  watch(session: string, onStart: () => void): () => void {
    return this.watchers.watch(session, onStart);
  }

  /** Whether this host runs a turn of the session now. */
  has(session: string): boolean {
    return this.turns.has(session);
  }

  /**
   * Cancels the session's running turn here; resolves to the promise of its release, or undefined when
   * this host runs no turn of the session.
   */
  cancel(session: string, reason: string, by?: IdentityRef): Promise<void> | undefined {
    const turn = this.turns.get(session);
    if (!turn) return undefined;
    if (!turn.controller.signal.aborted) turn.controller.abort(cancelError(reason, by));
    return turn.settled;
  }

  /** Subscribes once to the journal's cross-host cancel requests (shared journals only). */
  private listen(): void {
    if (this.subscribed || !this.journal.onCancelRequest) return;
    this.subscribed = this.journal
      .onCancelRequest((req) => {
        void this.cancel(req.session, req.reason);
      })
      .catch(() => {
        // Not listening (e.g. the journal closed): retried on the next turn; requesters repeat theirs.
        this.subscribed = undefined;
      });
  }
}
