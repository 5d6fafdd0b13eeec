// What a WAL commit's fdatasync costs when it extends the file against when it overwrites pages the
// file already has (issue 44: the checkpointer worker's WAL grew to 4000 frames before restarting, so
// ~4× as many of a fresh journal's commits extended the -wal file). Two files in one directory, written
// as a WAL commit writes (`frames` frames of 4096 + 24 bytes, then fdatasync), interleaved commit by
// commit: one always appends at its end, the other overwrites the same region it was pre-filled with
// (pre-filled and fsynced before timing). Prints median / p90 µs per commit of each.
// Run: npx tsx bench/profile/fsync-extend.ts [commits] [frames per commit]
import { closeSync, fdatasyncSync, openSync, writeSync } from "node:fs";
import { median, percentile } from "../lib/stats.js";
import { scratchDir } from "../lib/tmp.js";

const commits = Number(process.argv[2] ?? 1000);
const frames = Number(process.argv[3] ?? 2);
const frame = Buffer.alloc((4096 + 24) * frames, 7);
const dir = scratchDir("fsync-extend");
const grow = openSync(dir.file("grow"), "w");
const over = openSync(dir.file("over"), "w");
try {
  // The overwritten file holds a region as large as the growing one will reach: 8 commits' worth,
  // reused in a ring (as a restarted WAL is), already on disk.
  const ring = 8;
  for (let i = 0; i < ring; i++) writeSync(over, frame, 0, frame.length, i * frame.length);
  fdatasyncSync(over);
  const times = { extend: [] as number[], overwrite: [] as number[] };
  for (let i = 0; i < commits; i++) {
    const sides = i % 2 === 0 ? (["extend", "overwrite"] as const) : (["overwrite", "extend"] as const);
    for (const side of sides) {
      const t = performance.now();
      if (side === "extend") {
        writeSync(grow, frame, 0, frame.length, i * frame.length);
        fdatasyncSync(grow);
      } else {
        writeSync(over, frame, 0, frame.length, (i % ring) * frame.length);
        fdatasyncSync(over);
      }
      times[side].push((performance.now() - t) * 1000);
    }
  }
  for (const side of ["extend", "overwrite"] as const) {
    const xs = times[side];
    console.log(side.padEnd(10), `p50 ${median(xs).toFixed(0)} µs`, `p90 ${percentile(xs, 90).toFixed(0)} µs`);
  }
  console.log(`extend / overwrite, p50: ${(median(times.extend) / median(times.overwrite)).toFixed(2)}`);
} finally {
  closeSync(grow);
  closeSync(over);
  dir.dispose();
}
