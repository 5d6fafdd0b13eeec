// The order of a session's calls to its node after a turn returned at END (docs/protocol.md §4.6 item
// 9). Invariant: a session's next call to a node (Start, SnapshotActor, RestoreActor/Whole, DropActor,
// PutHistory) is opened only after the host's side of that session's previous Connect stream has
// ended — the node's status arrived, or the host cancelled the stream once END_CLOSE_WAIT_MS passed —
// so the wait is bounded by END_CLOSE_WAIT_MS and a node that never closes cannot wedge the session.
// A waiting call still follows its own signal (a Cancel does not wait for the previous stream).
import { abortError } from "../wire/index.js";

/** Where each node session's last stream is still ending; one per host process unless a test makes its own. */
export class SessionStreams {
  readonly #ending = new Map<string, Promise<void>>();

  /**
   * Records that the session's stream is still ending until `tail` settles (it must never reject and
   * must settle within END_CLOSE_WAIT_MS). The empty session (a throwaway instance per Start) is not
   * ordered.
   */
  ending(address: string, session: string, tail: Promise<void>): void {
    if (session === "") return;
    const key = keyOf(address, session);
    const entry = tail.then(() => {
      if (this.#ending.get(key) === entry) this.#ending.delete(key);
    });
    this.#ending.set(key, entry);
  }

  /**
   * Resolves once the session's previous stream has ended (at once when none is ending); rejects with
   * the signal's abort error when `signal` aborts first.
   */
  ended(address: string, session: string, signal?: AbortSignal): Promise<void> {
    const entry = session === "" ? undefined : this.#ending.get(keyOf(address, session));
    if (entry === undefined) return Promise.resolve();
    if (signal === undefined) return entry;
    if (signal.aborted) return Promise.reject(abortError(signal));
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => reject(abortError(signal));
      signal.addEventListener("abort", onAbort, { once: true });
      void entry.then(() => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      });
    });
  }
}

function keyOf(address: string, session: string): string {
  return `${address}\u0000${session}`;
}

/** The process's one SessionStreams: every RemoteHarness and ActorsClient of a node address share it. */
export const SESSION_STREAMS = new SessionStreams();
