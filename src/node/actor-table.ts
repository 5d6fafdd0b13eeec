// The actors of one harness node: one harness instance per session. Invariant: an actor runs at most
// one turn at a time, and is never snapshotted, replaced or restored over while a turn is running.
import type { Harness, HarnessFactory } from "../harness/types.js";
import { ErrorCode, HostError } from "../errors/index.js";

/** Extra classes a harness's state contains; the snapshot codec restores their prototypes. */
export type SnapshotClass = new (...args: never[]) => unknown;

/**
 * What a node-hosted harness may add to `Harness`: `snapshotClasses`, as an instance property or a
 * static property of its class, lists the classes (beyond its own) found in its state graph.
 */
export interface SnapshotAware {
  readonly snapshotClasses?: readonly SnapshotClass[];
}

export interface Actor {
  readonly session: string;
  readonly harness: Harness;
  /** Turns run since the actor was created or restored. */
  turns: number;
  /** Set while a turn runs; aborting it cancels that turn. */
  running: AbortController | undefined;
  /** The host's name for a restored instance ("" for an actor created by a turn or unnamed). */
  readonly instance?: string;
}

/** A claimed turn: `signal` aborts when the actor is dropped; `finish` releases the actor. */
export interface TurnClaim {
  readonly harness: Harness;
  readonly signal: AbortSignal;
  finish(): void;
}

export class ActorTable {
  readonly #actors = new Map<string, Actor>();
  readonly #factory: HarnessFactory;
  /** Turns of throwaway (session-less) instances, so shutdown can cancel them too. */
  readonly #throwaways = new Set<AbortController>();

  constructor(factory: HarnessFactory) {
    this.#factory = factory;
  }

  /**
   * Claims the session's actor for one turn, creating it on first use. An empty session gets a fresh
   * throwaway instance. SessionBusy (ABORTED) when the actor is mid-turn.
   */
  beginTurn(session: string): TurnClaim {
    const controller = new AbortController();
    if (session === "") {
      const harness = this.#factory();
      this.#throwaways.add(controller);
      return { harness, signal: controller.signal, finish: () => this.#throwaways.delete(controller) };
    }
    let actor = this.#actors.get(session);
    if (actor === undefined) {
      actor = { session, harness: this.#factory(), turns: 0, running: undefined };
      this.#actors.set(session, actor);
    }
    if (actor.running !== undefined) {
      throw new HostError(ErrorCode.SessionBusy, `actor for session ${session} is mid-turn`);
    }
    actor.running = controller;
    const claimed = actor;
    return {
      harness: claimed.harness,
      signal: controller.signal,
      finish: () => {
        if (claimed.running === controller) claimed.running = undefined;
        claimed.turns += 1;
      },
    };
  }

  /** SessionBusy when the session's actor is mid-turn (an absent actor is not busy). */
  assertNotBusy(session: string): void {
    if (this.#actors.get(session)?.running !== undefined) {
      throw new HostError(ErrorCode.SessionBusy, `actor for session ${session} is mid-turn`);
    }
  }

  /** The actor, idle; NotFound when absent, SessionBusy when mid-turn. */
  idle(session: string): Actor {
    const actor = this.#actors.get(session);
    if (actor === undefined) throw new HostError(ErrorCode.NotFound, `no actor for session ${session}`);
    if (actor.running !== undefined) {
      throw new HostError(ErrorCode.SessionBusy, `actor for session ${session} is mid-turn`);
    }
    return actor;
  }

  has(session: string): boolean {
    return this.#actors.has(session);
  }

  /** Installs a restored instance. AlreadyExists unless `replace`; SessionBusy if the old one is mid-turn. */
  install(session: string, harness: Harness, replace: boolean, instance = ""): void {
    const existing = this.#actors.get(session);
    if (existing !== undefined) {
      if (!replace) throw new HostError(ErrorCode.AlreadyExists, `actor for session ${session} already exists`);
      if (existing.running !== undefined) {
        throw new HostError(ErrorCode.SessionBusy, `actor for session ${session} is mid-turn`);
      }
    }
    this.#actors.set(session, { session, harness, turns: 0, running: undefined, instance });
  }

  /**
   * Removes the actor, cancelling a running turn. Whether one was removed. With `instance`, only the
   * restored instance of that name is removed: a drop that arrives after a newer restore is a no-op.
   */
  drop(session: string, instance = ""): boolean {
    const actor = this.#actors.get(session);
    if (actor === undefined) return false;
    if (instance !== "" && (actor.instance ?? "") !== instance) return false;
    this.#actors.delete(session);
    actor.running?.abort(new HostError(ErrorCode.Cancelled, `actor for session ${session} was dropped`));
    return true;
  }

  list(): readonly Actor[] {
    return [...this.#actors.values()].sort((a, b) => (a.session < b.session ? -1 : a.session > b.session ? 1 : 0));
  }

  /** Cancels every running turn (node shutdown). */
  abortAll(reason: unknown): void {
    for (const actor of this.#actors.values()) actor.running?.abort(reason);
    for (const controller of this.#throwaways) controller.abort(reason);
  }
}

/** The classes a harness lists for its snapshots (instance property, then its class's static one). */
export function snapshotClassesOf(harness: Harness): readonly SnapshotClass[] {
  const own = (harness as SnapshotAware).snapshotClasses ?? [];
  const ctor: unknown = (harness as { constructor?: unknown }).constructor;
  const statics = typeof ctor === "function" ? ((ctor as SnapshotAware).snapshotClasses ?? []) : [];
  const all = [...own, ...statics];
  for (const c of all) {
    if (typeof c !== "function") {
      throw new HostError(ErrorCode.FailedPrecondition, "snapshotClasses must list classes (constructors)");
    }
  }
  return [...new Set(all)];
}
