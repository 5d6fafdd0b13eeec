// Prints a V8 .cpuprofile's heaviest functions by self time (and the share of sampled time), so a
// profile can be read without a GUI. Invariant: read-only; percentages are of all samples.
import { readFileSync } from "node:fs";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

const file = process.argv[2];
const top = Number(process.argv[3] ?? 30);
if (!file) throw new Error("usage: summarize.ts FILE.cpuprofile [TOP]");
const profile = JSON.parse(readFileSync(file, "utf8")) as { nodes: ProfileNode[] };
const self = new Map<string, number>();
let total = 0;
for (const n of profile.nodes) {
  const hits = n.hitCount ?? 0;
  total += hits;
  const where = n.callFrame.url.replace(/^.*\/(node_modules|src|bench|harnesses)\//, "$1/");
  const key = `${n.callFrame.functionName || "(anonymous)"} ${where}:${n.callFrame.lineNumber + 1}`;
  self.set(key, (self.get(key) ?? 0) + hits);
}
const rows = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
for (const [key, hits] of rows) process.stdout.write(`${((hits / total) * 100).toFixed(1).padStart(5)}%  ${key}\n`);
