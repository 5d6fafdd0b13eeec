// The journal record of a harness-version upgrade (docs/versioning.md). Invariant: an upgrade is one
// host-written LIFECYCLE_BASELINE whose detail is exactly `harness-upgrade:` followed by the JSON
// `{"harness","from","to"}` this module writes (plus `"digest"`, the target build, when known); the projection reads it only through `parseUpgrade`, and
// any other BASELINE (one a Go host wrote, or free text) is not an upgrade. The reference's Lifecycle
// message has no version field, and this host never wrote BASELINE before, so no older journal can
// hold a record that parses here by accident.
import { Lifecycle_Kind, type Event } from "../gen/agentsessions/v1/common_pb.js";
import { UPGRADE_DETAIL_PREFIX, type UpgradeDetail } from "../journal/pin.js";
import { ev } from "./events.js";

export { parseUpgrade, UPGRADE_DETAIL_PREFIX, type UpgradeDetail } from "../journal/pin.js";

/**
 * The BASELINE record that moves a session from harness version `from` to `to`, run by the build
 * `digest` ("" or absent = unknown: the key is left out, so such a record reads as before digests).
 */
export function upgradeEvent(detail: UpgradeDetail): Event {
  const { harness, from, to, digest } = detail;
  const json = JSON.stringify(digest ? { harness, from, to, digest } : { harness, from, to });
  return ev.lifecycle(Lifecycle_Kind.LIFECYCLE_BASELINE, { detail: `${UPGRADE_DETAIL_PREFIX}${json}` });
}
