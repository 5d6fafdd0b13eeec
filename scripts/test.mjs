#!/usr/bin/env node
// `npm test` (what CI's .ci/run runs): everything. From the start, side by side: the suite's system
// dependencies (scripts/ensure-test-deps.mjs: apt-get installs, PostgreSQL), `npm run check` and the
// preparation of the other Node releases (scripts/test-other-nodes.mjs --prepare-only), their output
// held back until they end, and the unit project on this Node (the floor), which needs no system
// package; then, once the dependencies are there, the integration and e2e projects one after the
// other; then the unit project and what of the packed-consumer test can differ by Node on the other
// Node releases. Invariants: every step runs even when an earlier one failed (integration and e2e
// only when their dependencies are there; the table says so), so one run reports every failure; the
// exit code is 0 only when every step passed; the closing table gives each step's wall time.
import { runStep as step } from "./run-step.mjs";

const NODE = process.execPath;
const VITEST = "node_modules/vitest/vitest.mjs";

/** A step's held output, printed whole once it ended. */
function printHeld(r) {
  if (r.output.trim() !== "") process.stdout.write(`\n── ${r.name} ──\n${r.output.trimEnd()}\n`);
}

/** A step that did not run: failed in the table, with why. */
function notRun(name, why) {
  process.stdout.write(`\nnpm test: ${name} not run: ${why}\n`);
  return { name: `${name} (not run: ${why})`, ok: false, output: "", ms: 0 };
}

const depsRun = step("test deps", NODE, ["scripts/ensure-test-deps.mjs"], { held: true });
const besideRuns = [
  step("check (lint, layers, typecheck)", "npm", ["run", "--silent", "check"], { held: true }),
  step("other Nodes: prepare", NODE, ["scripts/test-other-nodes.mjs", "--prepare-only"], { held: true }),
];
const unit = await step("vitest unit", NODE, [VITEST, "run", "--project", "unit"]);
const deps = await depsRun;
printHeld(deps);
const results = [deps, unit];
for (const project of ["integration", "e2e"])
  results.push(
    deps.ok
      ? await step(`vitest ${project}`, NODE, [VITEST, "run", "--project", project])
      : notRun(`vitest ${project}`, "test deps failed"),
  );
const [check, prepare] = await Promise.all(besideRuns);
for (const r of [check, prepare]) {
  process.stdout.write(`\n── ${r.name} ──\n${r.output.trimEnd()}\n`);
  results.push(r);
}
results.push(
  prepare.ok
    ? await step("other Nodes: unit + test/package", NODE, ["scripts/test-other-nodes.mjs"])
    : notRun("other Nodes: unit + test/package", "other Nodes: prepare failed"),
);

/** The steps that ran beside others rather than alone. */
const BESIDE = new Set([deps, check, prepare, unit]);
process.stdout.write(
  "\nnpm test, wall time per step (steps marked * ran side by side from the start, integration and e2e after test deps):\n",
);
for (const r of results) {
  process.stdout.write(
    `  ${r.ok ? "ok    " : "FAILED"} ${BESIDE.has(r) ? "*" : " "} ${(r.ms / 1000).toFixed(0).padStart(5)} s  ${r.name}\n`,
  );
}
process.exit(results.every((r) => r.ok) ? 0 : 1);
