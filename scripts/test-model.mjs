#!/usr/bin/env node
// `npm run test:model -- [--runs N] [--seed S] [--max-commands M]`: the model-based tests of the
// session-log projection (test/projection/model.test.ts, docs/protocol.md §5.8) with more sequences
// than CI runs; `npm run test:model-multihost -- …` (--multihost) the same knobs for the model-based
// test of hosts sharing PostgreSQL (test/multihost/model.test.ts: MODEL_MH_RUNS, MODEL_MH_SEED,
// MODEL_MH_MAX_STEPS; it keeps going past a failing sequence, MODEL_MH_KEEP_GOING). Invariant: it only sets the test's knobs and runs that one file; the exit code is
// vitest's.
import { spawnSync } from "node:child_process";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "1000" },
    seed: { type: "string" },
    "max-commands": { type: "string" },
    multihost: { type: "boolean", default: false },
  },
  strict: true,
});
const { multihost, ...knobs } = values;
for (const [name, value] of Object.entries(knobs)) {
  if (value !== undefined && !/^-?\d+$/.test(value)) {
    process.stderr.write(`test:model: --${name} expects an integer, got ${JSON.stringify(value)}\n`);
    process.exit(2);
  }
}
const prefix = multihost ? "MODEL_MH_" : "MODEL_";
const env = {
  ...process.env,
  [`${prefix}RUNS`]: multihost && process.argv.every((a) => !a.startsWith("--runs")) ? "10" : values.runs,
  ...(values.seed !== undefined ? { [`${prefix}SEED`]: values.seed } : {}),
  ...(multihost ? { MODEL_MH_KEEP_GOING: "1" } : {}),
  ...(values["max-commands"] !== undefined
    ? { [multihost ? "MODEL_MH_MAX_STEPS" : "MODEL_MAX_COMMANDS"]: values["max-commands"] }
    : {}),
};
const file = multihost ? "test/multihost/model.test.ts" : "test/projection/model.test.ts";
const r = spawnSync("npx", ["vitest", "run", file], { stdio: "inherit", env });
process.exit(r.status ?? 1);
