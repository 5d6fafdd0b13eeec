// Which sessions are pinned to which version of a harness (docs/versioning.md). Invariant: a session's
// pin is read from its SessionLog projection and nowhere else (SessionLog.pinnedVersion); this module
// only folds every session of the named harness, so its cost is one read of those sessions' events.
import { SessionLog } from "../controller/projection.js";
import type { Journal } from "../journal/types.js";

/** version → uids of the sessions of `harness` pinned to it (sessions with no turn have no pin). */
export async function pinnedSessions(journal: Journal, harness: string): Promise<Map<string, string[]>> {
  const pins = new Map<string, string[]>();
  for (const uid of await journal.allSessionUids()) {
    const info = await journal.getSession(uid);
    if (!info || info.lastSeq === 0) continue;
    let events: Awaited<ReturnType<Journal["readEvents"]>>;
    try {
      events = await journal.readEvents(uid);
    } catch {
      continue; // an unreadable session is reported by verify, not here
    }
    const pin = SessionLog.of(events).pinnedVersion;
    if (!pin || pin.harness !== harness) continue;
    const list = pins.get(pin.version) ?? [];
    list.push(uid);
    pins.set(pin.version, list);
  }
  for (const list of pins.values()) list.sort();
  return pins;
}
