// The in-process parts of storing a large actor state, timed separately: v8.serialize of a big-state
// actor (bench/lib/actor-state.ts), sha256 of the bytes, the write and the fsync — what a snapshot
// costs before any transfer (the memory tier's raw floor). Observes only.
// Run: npx tsx bench/profile/snapshot-parts.ts [MiB=100] [runs=3]
import { createHash } from "node:crypto";
import { closeSync, fsyncSync, openSync, unlinkSync, writeSync } from "node:fs";
import { serialize } from "node:v8";
import { bigActor } from "../lib/actor-state.js";
import { scratchDir } from "../lib/tmp.js";

const MiB = 1024 * 1024;
const size = Number(process.argv[2] ?? 100);
const runs = Number(process.argv[3] ?? 3);
const state = bigActor(size * MiB);
const dir = scratchDir("snapshot-parts");
try {
  for (let i = 0; i < runs; i++) {
    const file = dir.file(`state-${i}.bin`);
    const t0 = performance.now();
    const bytes = serialize(state);
    const t1 = performance.now();
    createHash("sha256").update(bytes).digest("hex");
    const t2 = performance.now();
    const fd = openSync(file, "w");
    let off = 0;
    while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
    const t3 = performance.now();
    fsyncSync(fd);
    const t4 = performance.now();
    closeSync(fd);
    unlinkSync(file);
    const mib = bytes.length / MiB;
    const rawMs = t1 - t0 + (t4 - t2);
    console.log(
      `${mib.toFixed(0)} MiB: serialize ${(t1 - t0).toFixed(0)} ms, sha256 ${(t2 - t1).toFixed(0)} ms, write ${(t3 - t2).toFixed(0)} ms, fsync ${(t4 - t3).toFixed(0)} ms; serialize + write + fsync ${(mib / (rawMs / 1000)).toFixed(0)} MiB/s`,
    );
  }
} finally {
  dir.dispose();
}
