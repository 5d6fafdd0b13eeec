// The turns this host is running, by session, and how to cancel each (docs/protocol.md §17). Invariants:
// a turn is registered from the moment its operation takes this host's guard of the session (before the
// cross-host lock) until it lets the session go, so `settled` resolves only once the session is free
// again, saying whether the turn began (held the session) or stopped before it did; a cancel — from this host's Cancel or a cross-host request heard on
// the journal — aborts the turn's signal with a CANCELLED HostError naming the reason, and reaches no
// other turn. Cross-host requests are subscribed to lazily, on the first turn a shared journal runs.
import { followAbort } from "../abort.js";
import { TurnCancelled } from "../controller/turn-cancelled.js";
import { ErrorCode, HostError } from "../errors/index.js";
import type { IdentityRef } from "../gen/agentsessions/v1/common_pb.js";
import type { Journal } from "../journal/types.js";

interface Running {
  readonly controller: AbortController;
  /** Resolves once the session is released: true if the turn began, false if it stopped before. */
  readonly settled: Promise<boolean>;
}

/**
 * A registered turn: its signal (aborted by a cancel) and `done`, to run once the session is released,
 * saying whether the turn began (held the session and ran) or stopped before it held the session.
 */
export interface TurnHandle {
  readonly signal: AbortSignal;
  done(began: boolean): void;
}

/** The CANCELLED error a cancelled turn's signal carries (its ERROR record describes it and names `by`). */
export function cancelError(reason: string, by?: IdentityRef): HostError {
  return new TurnCancelled(reason, by);
}

/** The error of a turn whose signal aborted before it held the session: its own reason, or CANCELLED. */
export function turnStoppedBeforeItBegan(reason: unknown): HostError {
  if (reason instanceof HostError) return reason;
  return new HostError(ErrorCode.Cancelled, "turn cancelled by its caller before it began", { cause: reason });
}

export class RunningTurns {
  private readonly turns = new Map<string, Running>();
  private subscribed: Promise<unknown> | undefined;

  constructor(private readonly journal: Journal) {}

  /** Registers the session's turn; its signal also follows `outer`. */
  start(session: string, outer: AbortSignal): TurnHandle {
    this.listen();
    const controller = new AbortController();
    let done!: (began: boolean) => void;
    const settled = new Promise<boolean>((resolve) => (done = resolve));
    const entry = { controller, settled };
    this.turns.set(session, entry);
    // The turn's signal is the controller's, following `outer` through a listener removed at `done`
    // (not AbortSignal.any([outer, controller.signal]): one signal less per turn, same reasons).
    const unfollow = followAbort(outer, controller);
    return {
      signal: controller.signal,
      done: (began) => {
        unfollow();
        if (this.turns.get(session) === entry) this.turns.delete(session);
        done(began);
      },
    };
  }

  /** Whether this host runs a turn of the session now. */
  has(session: string): boolean {
    return this.turns.has(session);
  }

  /**
   * Cancels the session's running turn here; returns the promise of its release (true if the turn had
   * begun, false if it stopped before it held the session), or undefined when this host runs no turn of
   * the session.
   */
  cancel(session: string, reason: string, by?: IdentityRef): Promise<boolean> | undefined {
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
