// Loads a model module (`serve --model module:FILE`, docs/integrations.md "Serving an adapter's
// example"): your own model provider — a framework's mock, or a real provider wrapped for the host —
// as the host's model. Invariants: the module is found, imported and its default export checked before
// the host opens anything; the export is a ModelProvider (`{ name, invoke }`) or a function returning
// one (or a promise of one); every failure is one HostError naming the module — NOT_FOUND when there is
// no such file, INVALID_ARGUMENT when it throws on import or exports the wrong shape.
import { ErrorCode, HostError } from "../errors/index.js";
import type { ModelProvider } from "../model/types.js";
import { failedToLoad, importDefaultExport } from "./user-module.js";

const PREFIX = "module:";

/** The module path of a `module:FILE` model flag, or undefined for any other model flag. */
export function modelModulePath(flag: string): string | undefined {
  return flag.startsWith(PREFIX) ? flag.slice(PREFIX.length) : undefined;
}

function isProvider(v: unknown): v is ModelProvider {
  return (
    typeof v === "object" &&
    v !== null &&
    typeof (v as { invoke?: unknown }).invoke === "function" &&
    typeof (v as { name?: unknown }).name === "string"
  );
}

export async function loadModelModule(path: string): Promise<ModelProvider> {
  const where = `model module ${path}`;
  let exported = await importDefaultExport(path, where);
  try {
    if (typeof exported === "function") exported = await (exported as () => unknown)();
  } catch (err) {
    throw failedToLoad(where, err);
  }
  if (!isProvider(exported))
    throw new HostError(
      ErrorCode.InvalidArgument,
      `${where}: its default export must be a model provider ({ name, invoke }) or a function returning one`,
    );
  return exported;
}
