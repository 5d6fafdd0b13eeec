// Garbage collection of snapshot blobs (docs/protocol.md §9.7). Invariant: a blob survives while it is the newest
// checkpoint of any session — which covers a suspended session's SUSPEND (it writes a checkpoint
// row) and every fork child (each gets its own row naming the shared blob) — or while it is younger
// than the grace period; everything a restore, resume or recovery fork can name is kept.
import type { Journal } from "../journal/types.js";
import { collectGarbage, type GarbageOptions, type SnapshotStore } from "../snapshot/store.js";

export interface GarbageReport {
  readonly referenced: number;
  readonly deleted: readonly string[];
  /** Unfinished files (temp and staged files no writer finished) removed after the grace period. */
  readonly strays: readonly string[];
}

export async function collectSnapshotGarbage(
  journal: Journal,
  store: SnapshotStore,
  opts: GarbageOptions = {},
): Promise<GarbageReport> {
  const referenced = new Set<string>();
  for (const uid of await journal.allSessionUids()) {
    const latest = await journal.latestCheckpoint(uid);
    if (latest) referenced.add(latest.digest);
  }
  const { deleted, strays } = await collectGarbage(store, referenced, opts);
  return { referenced: referenced.size, deleted, strays };
}

export interface GcSchedule {
  stop(): void;
}

/**
 * Runs collectSnapshotGarbage every `intervalMs` (an unref'd timer; one run at a time; a failed run
 * is reported and the next one still happens).
 */
export function scheduleSnapshotGarbage(
  journal: Journal,
  store: SnapshotStore,
  opts: {
    intervalMs: number;
    graceMs?: number;
    onRun?: (report: GarbageReport) => void;
    onError?: (err: unknown) => void;
  },
): GcSchedule {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    collectSnapshotGarbage(journal, store, opts.graceMs !== undefined ? { graceMs: opts.graceMs } : {})
      .then(
        (report) => opts.onRun?.(report),
        (err: unknown) => opts.onError?.(err),
      )
      .finally(() => {
        running = false;
      });
  }, opts.intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
