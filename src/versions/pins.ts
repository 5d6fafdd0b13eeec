// Which sessions are pinned to which version of a harness (docs/versioning.md). Invariant: a session's
// pin is defined by the pin projection (src/journal/pin.ts), which SessionLog.pinnedVersion folds and the
// journal applies to the session row in every append transaction; this module only reads that indexed
// row (Journal.pinnedSessions), so `harness list` and a version retirement cost one query, not a scan.
import type { Journal, PinnedSession } from "../journal/types.js";

/** version → the sessions of `harness` pinned to it, by uid (sessions with no turn have no pin). */
export async function pinnedSessions(journal: Journal, harness: string): Promise<Map<string, PinnedSession[]>> {
  const pins = new Map<string, PinnedSession[]>();
  for (const p of await journal.pinnedSessions(harness)) {
    const list = pins.get(p.version) ?? [];
    list.push(p);
    pins.set(p.version, list);
  }
  for (const list of pins.values()) list.sort((a, b) => (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0));
  return pins;
}

/** The distinct build digests pinned sessions recorded (recorded without one: left out), sorted. */
export function pinnedDigests(pins: readonly PinnedSession[]): string[] {
  return [...new Set(pins.map((p) => p.digest).filter((d) => d !== ""))].sort();
}
