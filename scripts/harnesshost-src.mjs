#!/usr/bin/env node
// The `harnesshost` command run from TypeScript source through tsx's loader: what tests and a checkout
// use without a build (the published bin, bin/harnesshost.js, runs the compiled dist/ instead).
import { register } from "tsx/esm/api";

register();
const { main } = await import("../src/cli/run.ts");
process.exitCode = await main(process.argv.slice(2));
