// The package's version, as `harnesshost --version`, `harnesshost version` and `serve --version` print it.
// Invariant: read from the package's own package.json, the one place the version is written.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PACKAGE_ROOT } from "../paths.js";

/** The version in the package's own package.json. */
export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(join(PACKAGE_ROOT, "package.json"), "utf8")) as { version?: unknown };
  return typeof pkg.version === "string" ? pkg.version : "unknown";
}
