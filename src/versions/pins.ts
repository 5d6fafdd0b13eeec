// Which sessions are pinned to which version of a harness (docs/versioning.md). Invariant: a session's
// pin is defined by the pin projection (src/journal/pin.ts), which SessionLog.pinnedVersion folds and the
// journal applies to the session row in every append transaction; this module only reads that indexed
// row (Journal.pinnedSessions), so `harness list` and a version retirement cost one query, not a scan.
import type { Journal } from "../journal/types.js";

/** version → uids of the sessions of `harness` pinned to it (sessions with no turn have no pin). */
export async function pinnedSessions(journal: Journal, harness: string): Promise<Map<string, string[]>> {
  const pins = new Map<string, string[]>();
  for (const p of await journal.pinnedSessions(harness)) {
    const list = pins.get(p.version) ?? [];
    list.push(p.uid);
    pins.set(p.version, list);
  }
  for (const list of pins.values()) list.sort();
  return pins;
}
