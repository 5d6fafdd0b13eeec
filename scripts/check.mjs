#!/usr/bin/env node
// `npm run check`: the static checks — `npm run lint` (Biome), `npm run lint:layers`
// (dependency-cruiser) and `npm run typecheck` (tsc, incremental) — run side by side, each one's
// output printed whole after it ends, with its time. Invariant: exit 0 only when all three passed;
// it never changes a file.
import { spawn } from "node:child_process";

const CHECKS = ["lint", "lint:layers", "typecheck"];

function run(script) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn("npm", ["run", "--silent", script], { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (c) => {
      output += c;
    });
    child.stderr.on("data", (c) => {
      output += c;
    });
    child.on("error", (err) => resolve({ script, ok: false, output: `${output}${err}\n`, ms: Date.now() - started }));
    child.on("close", (code) => resolve({ script, ok: code === 0, output, ms: Date.now() - started }));
  });
}

const results = await Promise.all(CHECKS.map(run));
for (const r of results) {
  if (r.output.trim() !== "") process.stdout.write(`${r.output.trimEnd()}\n`);
  process.stdout.write(`check: ${r.script} ${r.ok ? "passed" : "FAILED"} (${(r.ms / 1000).toFixed(1)} s)\n`);
}
process.exit(results.every((r) => r.ok) ? 0 : 1);
