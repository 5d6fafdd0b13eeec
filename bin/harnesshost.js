#!/usr/bin/env node
// Entry point of the `harnesshost` command: runs the TypeScript CLI through tsx's loader, so a
// checkout works with no build step.
import { register } from "tsx/esm/api";

register();
const { main } = await import("../src/cli/run.ts");
process.exitCode = await main(process.argv.slice(2));
