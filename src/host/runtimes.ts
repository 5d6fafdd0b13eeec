// The host's door to the runtime table (src/runtime/table.ts) and the harness loader. Invariant: the
// host builds runtimes only through buildRuntime, so the table is the one place a runtime kind is mapped.
export { buildRuntime, type RuntimeBuilder, type RuntimeContext } from "../runtime/table.js";
export { importHarnessModule, loadHarnessFactory } from "../runtime/harness-module.js";
export { moduleDigest } from "../runtime/build-digest.js";
