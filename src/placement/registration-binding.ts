// A session is bound to the registration it was created on. Invariant: a session created on a
// registered harness records the registration's key and uid (annotation harnesshost.dev/harness-uid,
// "<name[@version]>=<uid>"); when that key is later served by another registration (the name was
// freed and registered again), no turn, resume, suspend, fork or replay runs the session on it — its
// records stay readable. A session moved to another version (upgrade) is judged by the entry it runs
// on, so only a re-registration of its own key refuses it.
import { ErrorCode, HostError } from "../errors/index.js";
import type { SessionInfo } from "../journal/types.js";
import type { HarnessEntry } from "./harness-entry.js";

/** The session annotation holding `<key>=<uid>` of the registration the session was created on. */
export const HARNESS_UID_ANNOTATION = "harnesshost.dev/harness-uid";

function keyOf(entry: HarnessEntry): string {
  return entry.version === undefined ? entry.name : `${entry.name}@${entry.version}`;
}

/** The annotations a new session on `entry` starts with: the caller's, plus its registration. */
export function bindingAnnotations(
  entry: HarnessEntry,
  annotations: Readonly<Record<string, string>>,
): Record<string, string> {
  const out = { ...annotations };
  delete out[HARNESS_UID_ANNOTATION];
  if (entry.source === "registered" && entry.registrationUid !== undefined)
    out[HARNESS_UID_ANNOTATION] = `${keyOf(entry)}=${entry.registrationUid}`;
  return out;
}

/** Throws FAILED_PRECONDITION when `entry` is a later registration of the key the session was created on. */
export function checkRegistrationBinding(entry: HarnessEntry, session: SessionInfo): void {
  if (entry.source !== "registered" || entry.registrationUid === undefined) return;
  const recorded = session.annotations[HARNESS_UID_ANNOTATION];
  const eq = recorded?.lastIndexOf("=") ?? -1;
  if (recorded === undefined || eq < 0) return;
  const key = recorded.slice(0, eq);
  const uid = recorded.slice(eq + 1);
  if (key !== keyOf(entry) || uid === entry.registrationUid) return;
  throw new HostError(
    ErrorCode.FailedPrecondition,
    `session ${session.uid} ran on an earlier registration of harness "${key}" (${uid}), whose name was freed and registered again; its records stay readable (get, export, verify) but it cannot run on the new registration — start a new session`,
  );
}
