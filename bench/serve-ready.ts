// `serve` ready: from spawning `harnesshost serve` to its first gRPC Health answer SERVING, against
// spawning `node -e 0` to its exit, alternating, as a user starts it (the compiled bin; the measuring
// itself is bench/lib/serve-ready.ts, which the `serve_ready_ms` figure runs too). Invariant: it
// reports, it never judges. Prints the medians and `serve_ready_ms` (the serve median).
// Usage: npm run build && npx tsx bench/serve-ready.ts [--runs N] [--bin PATH]
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { nodeE0Ms, PACKAGE_BIN, serveReadyMs } from "./lib/serve-ready.js";
import { median } from "./lib/stats.js";

const { values } = parseArgs({ options: { runs: { type: "string", default: "7" }, bin: { type: "string" } } });
const RUNS = Number(values.runs);
const BIN = resolve(values.bin ?? PACKAGE_BIN);

await serveReadyMs(BIN); // warm the page cache
const serve: number[] = [];
const listening: number[] = [];
const base: number[] = [];
for (let i = 0; i < RUNS; i++) {
  const s = await serveReadyMs(BIN);
  serve.push(s.healthMs);
  listening.push(s.listeningMs);
  base.push(await nodeE0Ms());
}
const r = (x: number) => Math.round(x * 10) / 10;
console.log(`bin ${BIN}, ${RUNS} runs`);
console.log(
  `serve_ready_ms ${r(median(serve))} (listening line ${r(median(listening))}; runs ${serve.map(r).join(" / ")})`,
);
console.log(`node -e 0 ${r(median(base))} ms; ratio ${r(median(serve) / median(base))}`);
