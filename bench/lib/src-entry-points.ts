// Importing this module makes the package's own entry points (`harnesshost/ai-sdk`, …) resolve to this
// tree's sources for every module loaded afterwards (bench/lib/src-entry-hooks.mjs). Invariant: import
// it before the first dynamic import of a module that names the package, such as a docs example.
import { register } from "node:module";

register(new URL("./src-entry-hooks.mjs", import.meta.url));
