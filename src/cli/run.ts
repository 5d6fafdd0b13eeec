// The CLI entry used by bin/harnesshost.js and scripts/harnesshost-src.mjs.
export { main } from "./main.js";
