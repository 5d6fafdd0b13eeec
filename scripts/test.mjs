#!/usr/bin/env node
// `npm test` (what CI's .ci/run runs): everything, its steps side by side. From the start: the suite's
// system dependencies (scripts/ensure-test-deps.mjs: apt-get installs, PostgreSQL), `npm run check`
// and the preparation of the other Node releases (scripts/test-other-nodes.mjs --prepare-only), their
// output held back until they end, and the unit project on this Node (the floor), which needs no
// system package. Once the dependencies are there: the e2e project, the longest. Once unit ended: the
// integration project. Once integration ended: the unit project and what of the packed-consumer test
// can differ by Node on the other Node releases. Invariants: every step runs even when an earlier one
// failed (integration and e2e only when their dependencies are there; the table says so), so one run
// reports every failure; the exit code is 0 only when every step passed; the closing table gives each
// step's wall time.
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
const checkRun = step("check (lint, layers, typecheck)", "npm", ["run", "--silent", "check"], { held: true });
const prepareRun = step("other Nodes: prepare", NODE, ["scripts/test-other-nodes.mjs", "--prepare-only"], {
  held: true,
});
const unitRun = step("vitest unit", NODE, [VITEST, "run", "--project", "unit"]);
const deps = await depsRun;

// e2e as soon as its dependencies are there, beside the rest: its files are the run's longest (a VM
// walkthrough alone takes minutes), so it sets the run's length. Its output is held and printed whole
// when it ends; unit's and then integration's go straight out.
const e2eRun = deps.ok
  ? step("vitest e2e", NODE, [VITEST, "run", "--project", "e2e"], { held: true })
  : Promise.resolve(notRun("vitest e2e", "test deps failed"));
const unit = await unitRun;
printHeld(deps);
// integration once unit ended: alone it keeps only about one of the two cores busy (most of its files
// wait on the processes and servers they start), so it runs beside e2e.
const integration = deps.ok
  ? await step("vitest integration", NODE, [VITEST, "run", "--project", "integration"])
  : notRun("vitest integration", "test deps failed");
// The other Node releases take integration's place beside what is left of e2e.
const prepare = await prepareRun;
const otherRun = prepare.ok
  ? step("other Nodes: unit + test/package", NODE, ["scripts/test-other-nodes.mjs"], { held: true })
  : Promise.resolve(notRun("other Nodes: unit + test/package", "other Nodes: prepare failed"));
const e2e = await e2eRun;
printHeld(e2e);
const check = await checkRun;
for (const r of [check, prepare]) process.stdout.write(`\n── ${r.name} ──\n${r.output.trimEnd()}\n`);
const other = await otherRun;
printHeld(other);
const results = [deps, unit, integration, e2e, check, prepare, other];

process.stdout.write(
  "\nnpm test, wall time per step (side by side: the first four from the start, e2e once test deps ended, integration once unit ended, the other Nodes once integration ended):\n",
);
for (const r of results) {
  process.stdout.write(`  ${r.ok ? "ok    " : "FAILED"} ${(r.ms / 1000).toFixed(0).padStart(5)} s  ${r.name}\n`);
}
process.exit(results.every((r) => r.ok) ? 0 : 1);
