// The library example of docs/conformance.md, verbatim: a harness author's vitest file. CI runs it, so
// the documented usage stays true.
import { conformanceSuite } from "harnesshost/conformance";

// One `it` per check of the harness's tier (read from Describe), failing with the check's evidence.
await conformanceSuite({
  harness: "harnesses/counteragent/index.ts", // a built-in name, a module path, or a node address
  turns: 3,
  forks: 2,
});
