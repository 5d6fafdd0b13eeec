// Per-session exclusion for Exec, Suspend, Resume, Fork, Approve, Cancel and Delete. Invariant: two operations on one
// session never overlap in this host; an overlapping caller is refused (ABORTED), never queued.
import { ErrorCode, HostError } from "../errors/index.js";
import { SessionWatchers } from "./session-watchers.js";

export type SessionOperation = "exec" | "suspend" | "resume" | "fork" | "approve" | "cancel" | "delete" | "upgrade";

export class SessionGuard {
  private readonly held = new Map<string, SessionOperation>();
  /** Callbacks run at the next release of a session (Cancel waiting for a holder to end). */
  private readonly watchers = new SessionWatchers();

  /** Takes the session or throws SessionBusy; returns the release function. */
  acquire(session: string, op: SessionOperation): () => void {
    const current = this.held.get(session);
    if (current) throw new HostError(ErrorCode.SessionBusy, `session ${session} is busy (${current} in progress)`);
    this.held.set(session, op);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.held.delete(session);
      this.watchers.fire(session);
    };
  }

  /** Runs `onRelease` at the session's next release; returns the function that stops watching. */
  watch(session: string, onRelease: () => void): () => void {
    return this.watchers.watch(session, onRelease);
  }

  isBusy(session: string): boolean {
    return this.held.has(session);
  }

  /** The operation holding the session, if any. */
  holder(session: string): SessionOperation | undefined {
    return this.held.get(session);
  }
}
