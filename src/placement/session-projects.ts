// Which project each session lies in, as far as this host has read it, for the project check a scoped
// caller's operation makes before it holds anything (docs/protocol.md §19 item 2). Invariants: an entry
// is only ever what the journal's own row said — a session's project never changes and its uid is
// never reused, so a remembered project stays true; at most `capacity` sessions are remembered (the
// oldest entry goes first), and a forgotten one is simply read again.
import type { OpContext } from "../obs/context.js";

/** Sessions whose project is remembered (about 100 bytes each). */
export const SESSION_PROJECTS_CAPACITY = 10_000;

export class SessionProjects {
  private readonly known = new Map<string, string>();

  constructor(private readonly capacity = SESSION_PROJECTS_CAPACITY) {}

  get(uid: string): string | undefined {
    return this.known.get(uid);
  }

  note(uid: string, project: string): void {
    if (this.known.has(uid)) return;
    if (this.known.size >= this.capacity) {
      const oldest = this.known.keys().next().value;
      if (oldest !== undefined) this.known.delete(oldest);
    }
    this.known.set(uid, project);
  }

  forget(uid: string): void {
    this.known.delete(uid);
  }
}

/** Whether a caller with `ctx` may see a session of `project` (no `projects`: every project). */
export function maySee(ctx: OpContext | undefined, project: string): boolean {
  return ctx?.projects === undefined || ctx.projects.has(project);
}
