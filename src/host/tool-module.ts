// Loads a tools module (`serve --tools MODULE`, docs/harness-authoring.md "Your own host-mediated
// tools"). Invariant: the module is found, imported and its default export checked before the host
// opens anything; every failure is one HostError naming the module — NOT_FOUND when there is no such
// file, INVALID_ARGUMENT when it throws on import or exports the wrong shape — so nothing is served.
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { checkHostTools, type HostTools } from "../controller/host-tools.js";
import { ErrorCode, HostError, isHostError } from "../errors/index.js";
import { BUILTIN_TOOL_NAMES } from "./host.js";
import { importHarnessModule } from "./runtimes.js";

export async function loadToolsModule(path: string): Promise<HostTools> {
  const where = `tools module ${path}`;
  if (!/\.(m?[jt]s)$/.test(path))
    throw new HostError(ErrorCode.InvalidArgument, `${where}: a module path must end in .js, .mjs or .ts`);
  if (!existsSync(resolve(path)))
    throw new HostError(ErrorCode.NotFound, `${where} not found (looked at ${resolve(path)})`);
  let mod: { default?: unknown };
  try {
    mod = (await importHarnessModule(path)) as { default?: unknown };
  } catch (err) {
    if (isHostError(err)) throw new HostError(err.code, `${where}: ${err.message}`);
    throw new HostError(
      ErrorCode.InvalidArgument,
      `${where} failed to load: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  if (mod.default === undefined)
    throw new HostError(
      ErrorCode.InvalidArgument,
      `${where} has no default export (an object of tool name → { args, run })`,
    );
  return checkHostTools(mod.default, where, BUILTIN_TOOL_NAMES);
}
