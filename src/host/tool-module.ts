// Loads a tools module (`serve --tools MODULE`, docs/harness-authoring.md "Your own host-mediated
// tools"). Invariant: the module is found, imported and its default export checked before the host
// opens anything; every failure is one HostError naming the module — NOT_FOUND when there is no such
// file, INVALID_ARGUMENT when it throws on import or exports the wrong shape — so nothing is served.
import { checkHostTools, type HostTools } from "../controller/host-tools.js";
import { ErrorCode, HostError } from "../errors/index.js";
import { BUILTIN_TOOL_NAMES } from "./host.js";
import { importDefaultExport } from "./user-module.js";

export async function loadToolsModule(path: string): Promise<HostTools> {
  const where = `tools module ${path}`;
  const exported = await importDefaultExport(path, where);
  if (exported === undefined)
    throw new HostError(
      ErrorCode.InvalidArgument,
      `${where} has no default export (an object of tool name → { args, run })`,
    );
  return checkHostTools(exported, where, BUILTIN_TOOL_NAMES);
}
