// The placement gate run on every Exec, Resume and Fork before any compute is created or anything is
// journaled (docs/protocol.md §7.1). Invariant: a memory-tier harness is admitted only onto a runtime that can
// snapshot memory, and a registered descriptor id must match what the harness reports.
import { type BoundedSignal, boundedSignal } from "../abort.js";
import { Resumability, type HarnessDescriptor } from "../gen/agentsessions/v1/harness_pb.js";
import { ErrorCode, HostError, isHostError } from "../errors/index.js";
import { canPlace } from "../runtime/types.js";
import { buildsDiffer } from "../journal/pin.js";
import type { Log } from "../obs/log.js";
import type { HarnessEntry } from "./harness-entry.js";

/** Bound on a Describe at admission (ms): long enough for a cold node, short enough to fail fast. */
export const DESCRIBE_TIMEOUT_MS = 10_000;

export interface Admission {
  readonly descriptor: HarnessDescriptor;
  readonly memory: boolean;
  /** The build digest the runtime serves ("" unknown), read after capabilities (docs/versioning.md). */
  readonly digest: string;
}

export function requiresMemory(d: HarnessDescriptor): boolean {
  return d.capabilities?.resumability === Resumability.REQUIRES_MEMORY_SNAPSHOT;
}

/**
 * The caller's signal bounded by DESCRIBE_TIMEOUT_MS (abort reason: the TimeoutError AbortSignal.timeout
 * gives): one controller following the caller through a listener and a timer, both cleared by `done` —
 * not AbortSignal.timeout + AbortSignal.any, two signals with weak-ref bookkeeping on every turn.
 */
function describeBound(signal: AbortSignal | undefined): BoundedSignal {
  return boundedSignal(
    signal,
    DESCRIBE_TIMEOUT_MS,
    () => new DOMException("The operation was aborted due to timeout", "TimeoutError"),
  );
}

export async function admit(entry: HarnessEntry, signal?: AbortSignal): Promise<Admission> {
  const bound = describeBound(signal);
  try {
    return await admitBounded(entry, bound.signal, signal);
  } finally {
    bound.done();
  }
}

async function admitBounded(
  entry: HarnessEntry,
  sig: AbortSignal,
  signal: AbortSignal | undefined,
): Promise<Admission> {
  let descriptor: HarnessDescriptor;
  try {
    descriptor = await entry.runtime.describe(sig);
  } catch (err) {
    if (signal?.aborted) {
      const reason: unknown = signal.reason;
      const timedOut =
        (reason instanceof DOMException && reason.name === "TimeoutError") ||
        (reason instanceof HostError && reason.code === ErrorCode.DeadlineExceeded);
      throw new HostError(
        timedOut ? ErrorCode.DeadlineExceeded : ErrorCode.Cancelled,
        `admission of harness "${entry.name}" interrupted by the caller`,
        { cause: err },
      );
    }
    if (
      isHostError(err) &&
      err.code !== ErrorCode.Unavailable &&
      err.code !== ErrorCode.Internal &&
      err.code !== ErrorCode.DeadlineExceeded
    )
      throw err;
    throw new HostError(
      ErrorCode.Unavailable,
      `placement: harness "${entry.name}" is unavailable: ${err instanceof Error ? err.message : String(err)}`,
      { cause: err },
    );
  }
  if (entry.descriptorId !== "" && descriptor.id !== entry.descriptorId) {
    throw new HostError(
      ErrorCode.FailedPrecondition,
      `placement: harness "${entry.name}" reports descriptor id "${descriptor.id}" but its registration expects "${entry.descriptorId}"`,
    );
  }
  if (entry.version !== undefined && descriptor.version !== entry.version) {
    throw new HostError(
      ErrorCode.FailedPrecondition,
      `placement: harness "${entry.name}" registered as version "${entry.version}" reports version "${descriptor.version}"`,
    );
  }
  const memory = requiresMemory(descriptor) || entry.declaredMemory === true;
  const caps = await entry.runtime.capabilities(sig);
  if (!canPlace(memory, caps)) {
    throw new HostError(
      ErrorCode.Unplaceable,
      `placement: harness cannot be placed on this runtime: harness "${descriptor.id}" needs REQUIRES_MEMORY_SNAPSHOT${requiresMemory(descriptor) ? "" : " (declared by its registration)"} but the ${entry.runtime.name} runtime provides MemorySnapshot=false`,
    );
  }
  return { descriptor, memory, digest: entry.runtime.buildDigest?.() ?? "" };
}

/**
 * The build drift of a session pinned to the version it is about to run on: its last turn recorded
 * another build digest of that same version (the author changed the code without bumping the version).
 * Undefined when there is none, or when either digest is unknown. A drift is reported, never refused
 * (docs/versioning.md, build digests).
 */
export function buildDrift(
  harness: string,
  admission: Admission,
  pin: { readonly harness: string; readonly version: string; readonly digest: string } | undefined,
): { readonly version: string; readonly pinned: string; readonly running: string } | undefined {
  if (!pin || pin.harness !== harness || pin.version !== admission.descriptor.version) return undefined;
  if (!buildsDiffer(pin.digest, admission.digest)) return undefined;
  return { version: pin.version, pinned: pin.digest, running: admission.digest };
}

/**
 * A session pinned to a version of this harness runs its next turn only on that version: a harness
 * that now reports another one is refused before any actor, fence or write (docs/versioning.md).
 */
export function refuseOffPin(
  harness: string,
  reported: string,
  pin: { readonly harness: string; readonly version: string } | undefined,
  session: string,
): void {
  if (!pin || pin.version === "" || pin.harness !== harness || pin.version === reported) return;
  throw new HostError(
    ErrorCode.FailedPrecondition,
    `session ${session} is pinned to harness "${harness}" version "${pin.version}" but the harness now reports version "${reported}"; move it with \`harnesshost upgrade --session ${session} --to-version ${reported}\``,
  );
}

/** Logs a build drift (see buildDrift) at warning level; the operation goes on. */
export function warnBuildDrift(
  log: Log,
  harness: string,
  admission: Admission,
  pin: { readonly harness: string; readonly version: string; readonly digest: string } | undefined,
): void {
  const drift = buildDrift(harness, admission, pin);
  if (!drift) return;
  log.warn(
    { version: drift.version, pinned_digest: drift.pinned, running_digest: drift.running },
    `harness "${harness}" version "${drift.version}" is now build ${drift.running}, but the session's last turn ran build ${drift.pinned}: the code changed without a version bump (docs/versioning.md)`,
  );
}
