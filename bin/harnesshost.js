#!/usr/bin/env node
// Entry point of the `harnesshost` command: runs the compiled, bundled CLI (dist/bundle/, built by
// `npm run build`, which `npm ci` and `npm pack` run through `prepare`; scripts/bundle.mjs says why it
// is bundled). No TypeScript is compiled at start.
let main;
try {
  ({ main } = await import("../dist/bundle/cli.js"));
} catch (err) {
  if (err?.code !== "ERR_MODULE_NOT_FOUND" || !String(err.message).includes("dist/bundle/cli.js")) throw err;
  process.stderr.write(
    "harnesshost: the compiled CLI (dist/) is missing; run `npm run build` in the package, or use scripts/harnesshost-src.mjs from a checkout\n",
  );
  process.exit(1);
}
process.exitCode = await main(process.argv.slice(2));
