// Loads the harness factory a spec names: a built-in harness by name, or a module whose default export
// is a factory. Invariant: a name that is neither a built-in nor a .js/.mjs/.ts path is refused
// INVALID_ARGUMENT naming the built-ins; a module path that names no file is NOT_FOUND naming the path it
// looked at; a TypeScript module loads through tsx or fails saying how to go on.
import { existsSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";
import { builtinHarnesses } from "../../harnesses/index.js";
import { ErrorCode, HostError } from "../errors/index.js";
import type { HarnessFactory } from "../harness/types.js";

/** The one tsx entry point used: `tsImport(url, parentUrl)` imports one TypeScript module. */
const TSX_API = "tsx/esm/api";

/**
 * Imports a harness module. A `.ts`/`.mts` module that this Node cannot load by itself (the compiled
 * CLI runs without a TypeScript loader) is imported through tsx when tsx is installed; without tsx the
 * error says how to go on.
 */
export async function importHarnessModule(target: string): Promise<unknown> {
  const url = pathToFileURL(resolve(target)).href;
  try {
    return await import(url);
  } catch (err) {
    const code = (err as { code?: unknown } | null)?.code;
    if (!/\.m?ts$/.test(target) || code !== "ERR_UNKNOWN_FILE_EXTENSION") throw err;
  }
  let tsx: { tsImport(url: string, parentUrl: string): Promise<unknown> };
  try {
    const specifier: string = TSX_API;
    tsx = (await import(specifier)) as typeof tsx;
  } catch {
    throw new HostError(
      ErrorCode.FailedPrecondition,
      `harness module ${target} is TypeScript and tsx is not installed: compile it to .js (e.g. with tsc) and pass the .js file, or install tsx (npm install --save-dev tsx)`,
    );
  }
  return tsx.tsImport(url, import.meta.url);
}

/** Whether `target` names a harness built into harnesshost (not a module path). */
export function isBuiltinHarness(target: string): boolean {
  return Object.hasOwn(builtinHarnesses, target);
}

/** A built-in harness name, or a module whose default export is a harness factory. */
export async function loadHarnessFactory(target: string): Promise<HarnessFactory> {
  const builtin = builtinHarnesses[target];
  if (builtin) return builtin;
  if (!/\.(m?[jt]s)$/.test(target)) {
    throw new HostError(
      ErrorCode.InvalidArgument,
      `unknown built-in harness "${target}" (built-ins: ${Object.keys(builtinHarnesses).join(", ")}); a module path must end in .js, .mjs or .ts`,
    );
  }
  const path = resolve(target);
  if (!existsSync(path))
    throw new HostError(
      ErrorCode.NotFound,
      `harness module ${target} not found${path === target ? "" : ` (no file at ${path})`}: check the path (it is relative to the current directory)`,
    );
  const mod = (await importHarnessModule(target)) as { default?: unknown };
  if (typeof mod.default !== "function")
    throw new HostError(ErrorCode.InvalidArgument, `harness module ${target} has no default export factory`);
  return mod.default as HarnessFactory;
}
