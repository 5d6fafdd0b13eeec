// What "sound" means for a journal several hosts wrote: every chain verifies; within a session (after
// its fork point) fences never go backwards, so no stale host appended after a newer fence; and turns
// never interleave — once another execution's record appears, an earlier execution never continues.
import { expect } from "vitest";
import type { Journal } from "../../src/journal/types.js";

export async function expectSound(journal: Journal, sessions: readonly string[]): Promise<void> {
  for (const uid of sessions) {
    const verdict = await journal.verify(uid);
    expect(verdict, `verify ${uid}`).toMatchObject({ ok: true });
    const info = await journal.getSession(uid);
    const records = await journal.readRange(uid);
    const own = records.filter((r) => r.seq > (info?.forkSeq ?? 0));
    for (let i = 1; i < own.length; i++) {
      expect(own[i]!.fence, `${uid} seq ${own[i]!.seq} fence`).toBeGreaterThanOrEqual(own[i - 1]!.fence);
    }
    const finished = new Set<string>();
    let current = "";
    for (const rec of own) {
      const id = rec.event.executionId;
      if (id === "" || id === current) continue;
      expect(finished.has(id), `${uid}: execution ${id} continues at seq ${rec.seq} after another began`).toBe(false);
      if (current !== "") finished.add(current);
      current = id;
    }
  }
}
