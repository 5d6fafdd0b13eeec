// Lazy imports of parts of the tree that may not be built yet. Invariant: a missing module or a missing
// export becomes an `Unavailable` with the reason; any other failure while loading is a real crash and
// propagates.
export class Unavailable extends Error {
  override readonly name = "Unavailable";
}

function isModuleNotFound(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") return true;
  const message = err instanceof Error ? err.message : "";
  return /Cannot find module|Failed to load url|does not provide an export named/i.test(message);
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split("\n")[0] ?? "";
}

/** Runs a dynamic `import()`; module-not-found becomes Unavailable("<purpose>: <reason>"). */
export async function guardImport<T>(load: () => Promise<T>, purpose: string): Promise<T> {
  try {
    return await load();
  } catch (err) {
    if (!isModuleNotFound(err)) throw err;
    throw new Unavailable(`${purpose}: ${firstLine(err)}`);
  }
}

/**
 * Imports a module the type checker cannot see yet (built by another helper), by URL relative to the
 * caller: `lazyImport(new URL("../../src/x.js", import.meta.url), "…")`.
 */
export async function lazyImport(url: URL, purpose: string): Promise<Record<string, unknown>> {
  const href = url.href;
  return guardImport(async () => (await import(href)) as Record<string, unknown>, purpose);
}

/** The named export of a lazily imported module, which must be a function or an object. */
export function requireExport<T>(mod: Record<string, unknown>, name: string, from: string): T {
  const value = mod[name];
  if (typeof value !== "function" && (typeof value !== "object" || value === null)) {
    throw new Unavailable(`${from} does not export ${name} yet`);
  }
  return value as T;
}
