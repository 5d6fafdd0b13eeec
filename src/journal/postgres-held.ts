// What the PostgreSQL journal knows of a session while this process holds the session's cluster lock.
// Invariant: an entry lives only between a successful tryLockSession and its release; its head is one
// this journal read from the database after the lock was taken (in the same hold, checked by a
// generation number) or committed itself, and never moves backwards (a read that began before a
// commit cannot overwrite what the commit taught); a write whose effect this journal cannot account
// for (a failed append, a delete, an import) forgets it, so the next read goes to the database. Only
// the lock holder writes a held session, so a remembered head is the stored one; should a host that
// lost its lock still write, the database's compare-and-swap refuses the holder's next append
// (Conflict) and the entry is forgotten — a stale head never lets a write through.
import type { Head, SessionInfo } from "./types.js";

interface Held {
  /** Identifies the hold, for its release. */
  readonly hold: number;
  /** Changes at every forget too, so a read begun before a forget teaches nothing. */
  generation: number;
  head: Head | undefined;
  /** The session row read with the lock, until it is taken or anything is written. */
  info: SessionInfo | undefined;
}

export class HeldSessions {
  private readonly held = new Map<string, Held>();
  private nextGeneration = 1;

  /** The lock on `uid` was just taken; returns what `release` needs to end exactly this hold. */
  hold(uid: string, info?: SessionInfo): number {
    const hold = this.nextGeneration++;
    const head = info === undefined ? undefined : { seq: info.lastSeq, hash: info.lastHash };
    this.held.set(uid, { hold, generation: hold, head, info });
    return hold;
  }

  /** The session row read with the lock, once, and only while nothing has been written since. */
  takeInfo(uid: string): SessionInfo | undefined {
    const entry = this.held.get(uid);
    const info = entry?.info;
    if (entry !== undefined) entry.info = undefined;
    return info;
  }

  /** Something of the row changed (a fence, a write): the row read with the lock is no longer it. */
  written(uid: string): void {
    const entry = this.held.get(uid);
    if (entry !== undefined) entry.info = undefined;
  }

  release(uid: string, hold: number): void {
    if (this.held.get(uid)?.hold === hold) this.held.delete(uid);
  }

  /** The current generation of `uid`'s hold (0 when not held): pass it to `learn` for a read that starts now. */
  generation(uid: string): number {
    return this.held.get(uid)?.generation ?? 0;
  }

  /** The head remembered for a held session, if any. */
  head(uid: string): Head | undefined {
    return this.held.get(uid)?.head;
  }

  /** Remembers `head` if the hold that was current when it was read (or committed) still is, moving forward only. */
  learn(uid: string, generation: number, head: Head): void {
    const entry = this.held.get(uid);
    if (entry === undefined || generation === 0 || entry.generation !== generation) return;
    if (entry.head !== undefined && entry.head.seq > head.seq) return;
    if (entry.head === undefined || entry.head.seq !== head.seq || entry.head.hash !== head.hash)
      entry.info = undefined;
    entry.head = head;
  }

  /** Drops the remembered head (the lock stays held): the next read asks the database. */
  forget(uid: string): void {
    const entry = this.held.get(uid);
    if (entry === undefined) return;
    entry.head = undefined;
    entry.info = undefined;
    entry.generation = this.nextGeneration++;
  }
}
