// The pin projection: which harness version (and build digest) a session runs on, applied one record at
// a time. Invariant: this is the only definition of a pin — SessionLog.pinnedVersion folds it, and every
// journal backend applies it in the append transaction to keep the session row's pin columns, so the
// indexed pin never differs from the one the log answers (docs/versioning.md).
import { z } from "zod";
import { EventKind, Lifecycle_Kind, type Event } from "../gen/agentsessions/v1/common_pb.js";

/** A session's pin. `seq` is the EXECUTION_START or upgrade record that set it (never 0). */
export interface SessionPin {
  /** The registry name the version belongs to. */
  readonly harness: string;
  readonly version: string;
  /** "sha256:<hex>" of the build that ran the turn; "" when unknown (no digest recorded). */
  readonly digest: string;
  readonly seq: number;
}

/** One session pinned to a version of a harness, as a journal's pin index answers it. */
export interface PinnedSession {
  readonly uid: string;
  readonly version: string;
  readonly digest: string;
}

export const UPGRADE_DETAIL_PREFIX = "harness-upgrade:";

const UpgradeDetail = z.strictObject({
  harness: z.string().min(1),
  from: z.string(),
  to: z.string().min(1),
  /** The target build's digest, when the host knew it at the upgrade; absent = unknown. */
  digest: z
    .string()
    .regex(/^sha256:[0-9a-f]{64}$/)
    .optional(),
});
export type UpgradeDetail = z.infer<typeof UpgradeDetail>;

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

/**
 * How EXECUTION_START.harness_version carries the build digest: `<version>+sha256:<64 hex>`, the build
 * metadata form (a `+` suffix that version precedence ignores). The reference's ExecutionStart has no
 * digest field, and a new field would change the chain hash a reference verifier recomputes (it drops
 * fields it does not know), so the digest rides in the version string, where the chain keeps it opaque.
 */
const BUILD_SUFFIX = /^(.*)\+(sha256:[0-9a-f]{64})$/s;

/** The harness_version to record for `version` run by the build `digest` ("" = unknown: the bare version). */
export function recordedVersion(version: string, digest: string): string {
  return digest === "" ? version : `${version}+${digest}`;
}

/**
 * Whether two builds of one version differ (a build drift): both digests are known and are not the same.
 * The one definition of a drift, for admission's warning and the Session view's pin annotation.
 */
export function buildsDiffer(pinned: string, running: string): boolean {
  return pinned !== "" && running !== "" && pinned !== running;
}

/** A recorded harness_version split into the descriptor's version and the build digest ("" = none recorded). */
export function splitRecordedVersion(recorded: string): { readonly version: string; readonly digest: string } {
  const m = BUILD_SUFFIX.exec(recorded);
  return m ? { version: m[1] ?? "", digest: m[2] ?? "" } : { version: recorded, digest: "" };
}

/** The pin after the record `seq` carrying `event` is committed on a session pinned to `current`. */
export function projectPin(current: SessionPin | undefined, seq: number, event: Event): SessionPin | undefined {
  if (event.kind === EventKind.EVENT_EXECUTION_START && event.body.case === "executionStart") {
    const start = event.body.value;
    return { harness: start.harness, ...splitRecordedVersion(start.harnessVersion), seq };
  }
  if (event.body.case === "lifecycle") {
    const up = parseUpgrade(event.body.value.kind, event.body.value.detail);
    if (up) return { harness: up.harness, version: up.to, digest: up.digest ?? "", seq };
  }
  return current;
}

/** The pin after `records` (in seq order) on a session pinned to `current`. */
export function projectPins(
  current: SessionPin | undefined,
  records: readonly { readonly seq: number; readonly event: Event }[],
): SessionPin | undefined {
  let pin = current;
  for (const r of records) pin = projectPin(pin, r.seq, r.event);
  return pin;
}
