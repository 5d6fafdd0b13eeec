// Garbage collection of snapshot blobs (SPEC §8). Invariant: a blob survives while it is the newest
// checkpoint of any session — which covers a suspended session's SUSPEND (it writes a checkpoint
// row) and every fork child (each gets its own row naming the shared blob) — or while it is younger
// than the grace period; everything a restore, resume or recovery fork can name is kept.
import type { Journal } from "../journal/types.js";
import { collectGarbage, type GarbageOptions, type SnapshotStore } from "../snapshot/store.js";

export interface GarbageReport {
  readonly referenced: number;
  readonly deleted: readonly string[];
}

export async function collectSnapshotGarbage(journal: Journal, store: SnapshotStore, opts: GarbageOptions = {}): Promise<GarbageReport> {
  const referenced = new Set<string>();
  for (const uid of await journal.allSessionUids()) {
    const latest = await journal.latestCheckpoint(uid);
    if (latest) referenced.add(latest.digest);
  }
  const { deleted } = await collectGarbage(store, referenced, opts);
  return { referenced: referenced.size, deleted };
}
