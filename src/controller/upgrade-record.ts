// The journal record of a harness-version upgrade (docs/versioning.md). Invariant: an upgrade is one
// host-written LIFECYCLE_BASELINE whose detail is exactly `harness-upgrade:` followed by the JSON
// `{"harness","from","to"}` this module writes; the projection reads it only through `parseUpgrade`, and
// any other BASELINE (one a Go host wrote, or free text) is not an upgrade. The reference's Lifecycle
// message has no version field, and this host never wrote BASELINE before, so no older journal can
// hold a record that parses here by accident.
import { z } from "zod";
import { Lifecycle_Kind, type Event } from "../gen/agentsessions/v1/common_pb.js";
import { ev } from "./events.js";

export const UPGRADE_DETAIL_PREFIX = "harness-upgrade:";

const UpgradeDetail = z.strictObject({
  harness: z.string().min(1),
  from: z.string(),
  to: z.string().min(1),
});
export type UpgradeDetail = z.infer<typeof UpgradeDetail>;

/** The BASELINE record that moves a session from harness version `from` to `to`. */
export function upgradeEvent(detail: UpgradeDetail): Event {
  const json = JSON.stringify({ harness: detail.harness, from: detail.from, to: detail.to });
  return ev.lifecycle(Lifecycle_Kind.LIFECYCLE_BASELINE, { detail: `${UPGRADE_DETAIL_PREFIX}${json}` });
}

/** The upgrade a lifecycle record carries, or undefined when it is not an upgrade record. */
export function parseUpgrade(kind: Lifecycle_Kind, detail: string): UpgradeDetail | undefined {
  if (kind !== Lifecycle_Kind.LIFECYCLE_BASELINE || !detail.startsWith(UPGRADE_DETAIL_PREFIX)) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(detail.slice(UPGRADE_DETAIL_PREFIX.length));
  } catch {
    return undefined;
  }
  const parsed = UpgradeDetail.safeParse(raw);
  return parsed.success ? parsed.data : undefined;
}
