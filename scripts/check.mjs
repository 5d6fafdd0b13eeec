#!/usr/bin/env node
// `npm run check`: the static checks — `npm run lint` (Biome), `npm run lint:layers`
// (dependency-cruiser) and `npm run typecheck` (tsc, incremental) — run side by side, each one's
// output printed whole after it ends, with its time. Invariant: exit 0 only when all three passed;
// it never changes a file.
import { runStep } from "./run-step.mjs";

const CHECKS = ["lint", "lint:layers", "typecheck"];

const results = await Promise.all(CHECKS.map((c) => runStep(c, "npm", ["run", "--silent", c], { held: true })));
for (const r of results) {
  if (r.output.trim() !== "") process.stdout.write(`${r.output.trimEnd()}\n`);
  process.stdout.write(`check: ${r.name} ${r.ok ? "passed" : "FAILED"} (${(r.ms / 1000).toFixed(1)} s)\n`);
}
process.exit(results.every((r) => r.ok) ? 0 : 1);
