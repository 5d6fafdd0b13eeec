#!/usr/bin/env node
// `npm test` (what CI's .ci/run runs): everything, in three waves of steps run side by side. First: the
// suite's system dependencies (scripts/ensure-test-deps.mjs: apt-get installs, PostgreSQL), `npm run
// check` and the preparation of the other Node releases (scripts/test-other-nodes.mjs --prepare-only),
// their output held back until they end, and the unit project on this Node (the floor), which needs no
// system package. Then, once the dependencies are there and unit ended: the integration and e2e
// projects together (each alone kept about one of the two cores busy). Then, once integration ended,
// the unit project and what of the packed-consumer test can differ by Node on the other Node releases,
// beside what is left of e2e. Invariants: every step runs even when an earlier one failed (integration
// and e2e only when their dependencies are there; the table says so), so one run reports every
// failure; the exit code is 0 only when every step passed; the closing table gives each step's wall
// time.
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
const unit = await step("vitest unit", NODE, [VITEST, "run", "--project", "unit"]);
const deps = await depsRun;
printHeld(deps);

// integration and e2e side by side: each keeps about one core busy on its own (most of their files wait
// on the processes, servers and guests they start), so one after the other left a core idle for most of
// the run. integration's output goes straight out; e2e's is held and printed whole when it ends.
const e2eRun = deps.ok
  ? step("vitest e2e", NODE, [VITEST, "run", "--project", "e2e"], { held: true })
  : Promise.resolve(notRun("vitest e2e", "test deps failed"));
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
  "\nnpm test, wall time per step (side by side: the first four from the start; integration and e2e once test deps and unit ended; the other Nodes once integration ended):\n",
);
for (const r of results) {
  process.stdout.write(`  ${r.ok ? "ok    " : "FAILED"} ${(r.ms / 1000).toFixed(0).padStart(5)} s  ${r.name}\n`);
}
process.exit(results.every((r) => r.ok) ? 0 : 1);
