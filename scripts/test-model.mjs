#!/usr/bin/env node
// `npm run test:model -- [--runs N] [--seed S] [--max-commands M]`: the model-based tests of the
// session-log projection (test/projection/model.test.ts, docs/protocol.md §5.8) with more sequences
// than CI runs. Invariant: it only sets the test's knobs (MODEL_RUNS, MODEL_SEED, MODEL_MAX_COMMANDS)
// and runs that one file; the exit code is vitest's.
import { spawnSync } from "node:child_process";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "1000" },
    seed: { type: "string" },
    "max-commands": { type: "string" },
  },
  strict: true,
});
for (const [name, value] of Object.entries(values)) {
  if (value !== undefined && !/^-?\d+$/.test(value)) {
    process.stderr.write(`test:model: --${name} expects an integer, got ${JSON.stringify(value)}\n`);
    process.exit(2);
  }
}
const env = {
  ...process.env,
  MODEL_RUNS: values.runs,
  ...(values.seed !== undefined ? { MODEL_SEED: values.seed } : {}),
  ...(values["max-commands"] !== undefined ? { MODEL_MAX_COMMANDS: values["max-commands"] } : {}),
};
const r = spawnSync("npx", ["vitest", "run", "test/projection/model.test.ts"], { stdio: "inherit", env });
process.exit(r.status ?? 1);
