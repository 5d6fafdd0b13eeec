// Prints a V8 .cpuprofile's heaviest functions by self time (and the share of sampled time), so a
// profile can be read without a GUI; `--inclusive` ranks by time in the function and its callees,
// `--after MS` ignores the first MS of the profile (start-up). Invariant: read-only; percentages are
// of the samples kept.
import { readFileSync } from "node:fs";
import { frameName, parentsOf, type Profile } from "./cpuprofile.js";

const args = process.argv.slice(2);
const inclusive = args.includes("--inclusive");
const afterIdx = args.indexOf("--after");
const afterMs = afterIdx >= 0 ? Number(args[afterIdx + 1]) : 0;
const positional = args.filter((a, i) => !a.startsWith("--") && (afterIdx < 0 || i !== afterIdx + 1));
const file = positional[0];
const top = Number(positional[1] ?? 30);
if (!file) throw new Error("usage: summarize.ts FILE.cpuprofile [TOP] [--inclusive] [--after MS]");
const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = parentsOf(profile);

const counts = new Map<string, number>();
let kept = 0;
let clock = 0;
for (let i = 0; i < profile.samples.length; i++) {
  clock += (profile.timeDeltas[i] ?? 0) / 1000;
  if (clock < afterMs) continue;
  kept++;
  let id: number | undefined = profile.samples[i];
  const seen = new Set<string>();
  while (id !== undefined) {
    const node = byId.get(id);
    if (!node) break;
    const key = frameName(node);
    if (!seen.has(key)) {
      seen.add(key);
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    if (!inclusive) break;
    id = parent.get(id);
  }
}
const rows = [...counts.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
process.stdout.write(`${kept} samples, ${(clock - afterMs).toFixed(0)} ms kept\n`);
for (const [key, hits] of rows) process.stdout.write(`${((hits / kept) * 100).toFixed(1).padStart(5)}%  ${key}\n`);
