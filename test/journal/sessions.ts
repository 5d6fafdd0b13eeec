// Sessions for journal tests. A journal writes only to a session created first — a write to a uid with
// no row is NOT_FOUND, never an implicit create (docs/protocol.md §18 rule 8) — so a test that appends
// to a bare uid creates it here first.
import type { Journal } from "../../src/journal/types.js";

/** Creates each of `uids` (project default, no harness) unless it exists; resolves to `journal`. */
export async function created<J extends Pick<Journal, "getSession" | "createSession">>(
  journal: J,
  ...uids: string[]
): Promise<J> {
  for (const uid of uids) {
    if ((await journal.getSession(uid)) === undefined)
      await journal.createSession({ uid, project: "default", harness: "" });
  }
  return journal;
}
