// What the PostgreSQL journal knows of a session while this process holds the session's cluster lock.
// Invariant: an entry lives only while this process holds the lock (an operation's hold, or a parked
// lease between operations: lock.ts) and is served only while an operation holds it; its
// head and row are ones this journal read from the database under the lock (in the same hold, checked
// by a generation number) or moved by its own commits, never backwards (a read that began before a
// commit cannot overwrite what the commit taught); a write whose effect this journal cannot account
// for (a failed append, a fence minted apart from a commit, a delete, an import, any write while the
// lease is parked or still in flight when it was parked) forgets it, so the next read goes to the database. Only the lock holder writes a
// held session, so a remembered head is the stored one; should a host that lost its lock still write,
// the database's compare-and-swap refuses the holder's next append (Conflict), the entry is forgotten
// and the lease let go — a stale head never lets a write through.
import type { CachedHead } from "./batch.js";
import { rowAfterCommit } from "../session-row.js";
import type { Head, SessionInfo } from "../types.js";

interface Held {
  /** Changes at every forget too, so a read begun before a forget teaches nothing. */
  generation: number;
  head: Head | undefined;
  /** The session row as the lock read it and this journal's commits since moved it. */
  info: SessionInfo | undefined;
  /** Between operations (a parked lease): kept, but not served. */
  parked: boolean;
}

export class HeldSessions {
  private readonly held = new Map<string, Held>();
  private nextGeneration = 1;

  /** The lock on `uid` was just taken, and `info` (undefined: no row) read with it. */
  hold(uid: string, info?: SessionInfo): void {
    const head = info === undefined ? undefined : { seq: info.lastSeq, hash: info.lastHash };
    this.held.set(uid, { generation: this.nextGeneration++, head, info, parked: false });
  }

  /** The operation holding `uid` ended and the lock stays as a lease: keep what is known, serve none of it. */
  park(uid: string): void {
    const entry = this.held.get(uid);
    if (entry !== undefined) entry.parked = true;
  }

  /** A parked lease of `uid` was taken up by the next operation: what was known is served again. */
  resume(uid: string): void {
    const entry = this.held.get(uid);
    if (entry !== undefined) entry.parked = false;
  }

  /** Whether `uid` is held as a parked lease, between operations. */
  parked(uid: string): boolean {
    return this.held.get(uid)?.parked === true;
  }

  /** This process no longer holds `uid`'s lock. */
  drop(uid: string): void {
    this.held.delete(uid);
  }

  /** The session row read with the lock and kept current by this journal's commits, while an operation holds it. */
  info(uid: string): SessionInfo | undefined {
    return this.served(uid)?.info;
  }

  /**
   * A write of `uid` is starting: returns the row as it stands (to move with the commit, see
   * `committed`), and stops serving it until then. A write while the lease is parked forgets it all.
   */
  writing(uid: string): SessionInfo | undefined {
    const entry = this.held.get(uid);
    if (entry === undefined) return undefined;
    if (entry.parked) {
      this.forget(uid);
      return undefined;
    }
    const info = entry.info;
    entry.info = undefined;
    return info;
  }

  /** The current generation of `uid`'s hold (0 when not held or parked): pass it to `learn` for a read that starts now. */
  generation(uid: string): number {
    return this.served(uid)?.generation ?? 0;
  }

  /** The head remembered for a held session, if any. */
  head(uid: string): Head | undefined {
    return this.served(uid)?.head;
  }

  /** Remembers `head` if the hold that was current when it was read (or committed) still is, moving forward only. */
  learn(uid: string, generation: number, head: Head): void {
    const entry = this.live(uid, generation);
    if (entry === undefined) return;
    if (entry.head !== undefined && entry.head.seq > head.seq) return;
    if (entry.head === undefined || entry.head.seq !== head.seq || entry.head.hash !== head.hash)
      entry.info = undefined;
    entry.head = head;
  }

  /** Remembers a row read from the database (and its head) under the same hold. */
  learnRow(uid: string, generation: number, info: SessionInfo): void {
    this.learn(uid, generation, { seq: info.lastSeq, hash: info.lastHash });
    const entry = this.live(uid, generation);
    if (entry?.head?.seq === info.lastSeq && entry.head.hash === info.lastHash) entry.info = info;
  }

  /** This journal's own commit left `after` behind; `before` is what `writing` returned for it. */
  committed(uid: string, generation: number, before: SessionInfo | undefined, after: CachedHead): void {
    this.learn(uid, generation, { seq: after.seq, hash: after.hash });
    const entry = this.live(uid, generation);
    if (entry === undefined || before === undefined) return;
    if (entry.head?.seq === after.seq && entry.head.hash === after.hash) entry.info = rowAfterCommit(before, after);
  }

  /** Drops the remembered head and row (the lock stays held): the next read asks the database. */
  forget(uid: string): void {
    const entry = this.held.get(uid);
    if (entry === undefined) return;
    entry.head = undefined;
    entry.info = undefined;
    entry.generation = this.nextGeneration++;
  }

  private served(uid: string): Held | undefined {
    const entry = this.held.get(uid);
    return entry === undefined || entry.parked ? undefined : entry;
  }

  private live(uid: string, generation: number): Held | undefined {
    const entry = this.served(uid);
    return entry === undefined || generation === 0 || entry.generation !== generation ? undefined : entry;
  }
}
