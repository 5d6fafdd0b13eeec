// Young-generation collections caused by minting record hashes, the tree path (proto3-JSON tree + JCS)
// against the direct canonical writer, on echo-turn events: counts scavenges over 200,000 records each,
// twice, alternating. Run with a small fixed young generation so the counts resolve:
// `node --import tsx --max-semi-space-size=2 bench/profile/hash-alloc.ts`. Observes only.
import { PerformanceObserver, constants } from "node:perf_hooks";
import { canonicalRecord, canonicalRecordViaTree, sha256Hex } from "../../src/canon/index.js";
import { echoEventStream } from "../lib/echo-turns.js";

const events = echoEventStream(1000);
const prev = sha256Hex("prev");
let scavenges = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    if ((e as unknown as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR)
      scavenges++;
  }
}).observe({ entryTypes: ["gc"] });
const settle = () => new Promise((r) => setTimeout(r, 50));
const paths = { tree: canonicalRecordViaTree, direct: canonicalRecord };
for (const name of ["tree", "direct", "tree", "direct"] as const) {
  await settle();
  scavenges = 0;
  let sink = 0;
  for (let k = 0; k < 200; k++) {
    for (let i = 0; i < events.length; i++) sink += sha256Hex(paths[name](prev, i, events[i]!)).length;
  }
  await settle();
  console.log(`${name.padEnd(6)} ${scavenges} scavenges per 200,000 records (sink ${sink % 7})`);
}
