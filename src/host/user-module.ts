// Loads a module of the operator's own (`serve --tools MODULE`, `serve --model module:FILE`).
// Invariant: one failure shape for every such module — a path not ending in .js/.mjs/.ts is
// INVALID_ARGUMENT, a missing file NOT_FOUND, a module that throws on import INVALID_ARGUMENT (a
// HostError keeps its code) — each one HostError whose message begins with `where`.
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { ErrorCode, HostError, isHostError } from "../errors/index.js";
import { importHarnessModule } from "./runtimes.js";

/** The default export of the module at `path` (undefined when it has none); `where` names it in errors. */
export async function importDefaultExport(path: string, where: string): Promise<unknown> {
  if (!/\.(m?[jt]s)$/.test(path))
    throw new HostError(ErrorCode.InvalidArgument, `${where}: a module path must end in .js, .mjs or .ts`);
  if (!existsSync(resolve(path)))
    throw new HostError(ErrorCode.NotFound, `${where} not found (looked at ${resolve(path)})`);
  try {
    return ((await importHarnessModule(path)) as { default?: unknown }).default;
  } catch (err) {
    throw failedToLoad(where, err);
  }
}

/** A module's load-time failure as the HostError `importDefaultExport` throws. */
export function failedToLoad(where: string, err: unknown): HostError {
  if (isHostError(err)) return new HostError(err.code, `${where}: ${err.message}`);
  return new HostError(
    ErrorCode.InvalidArgument,
    `${where} failed to load: ${err instanceof Error ? err.message : String(err)}`,
  );
}
