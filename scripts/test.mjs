#!/usr/bin/env node
// `npm test` (what CI's .ci/run runs): everything, in this order — the suite's system dependencies
// (scripts/ensure-test-deps.mjs); then the vitest projects unit, integration and e2e one after
// another on this Node (the floor), while `npm run check` and the preparation of the other Node
// releases (scripts/test-other-nodes.mjs --prepare-only) run beside them, their output held back
// until they end; then the unit project and the packed-consumer test on the other Node releases.
// Invariants: every step runs even when an earlier one failed, so one run reports every failure;
// the exit code is 0 only when every step passed; the closing table gives each step's wall time.
import { runStep as step } from "./run-step.mjs";

const NODE = process.execPath;
const VITEST = "node_modules/vitest/vitest.mjs";

const results = [];
const deps = await step("test deps", NODE, ["scripts/ensure-test-deps.mjs"]);
results.push(deps);
if (deps.ok) {
  const beside = [
    step("check (lint, layers, typecheck)", "npm", ["run", "--silent", "check"], { held: true }),
    step("other Nodes: prepare", NODE, ["scripts/test-other-nodes.mjs", "--prepare-only"], { held: true }),
  ];
  for (const project of ["unit", "integration", "e2e"])
    results.push(await step(`vitest ${project}`, NODE, [VITEST, "run", "--project", project]));
  const [check, prepare] = await Promise.all(beside);
  for (const r of [check, prepare]) {
    process.stdout.write(`\n── ${r.name} ──\n${r.output.trimEnd()}\n`);
    results.push(r);
  }
  if (prepare.ok) results.push(await step("other Nodes: unit + test/package", NODE, ["scripts/test-other-nodes.mjs"]));
}

process.stdout.write("\nnpm test, wall time per step (steps marked * ran beside the vitest projects):\n");
for (const r of results) {
  const beside = r.name.startsWith("check") || r.name === "other Nodes: prepare" ? "*" : " ";
  process.stdout.write(
    `  ${r.ok ? "ok    " : "FAILED"} ${beside} ${(r.ms / 1000).toFixed(0).padStart(5)} s  ${r.name}\n`,
  );
}
process.exit(results.every((r) => r.ok) ? 0 : 1);
