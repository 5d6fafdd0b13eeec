// Where the package's own files are. Invariant: compiled modules live in <root>/dist/src and source
// modules in <root>/src, so the package root — and the bin, proto/ and package.json under it — is found
// from this file's own URL the same way in a checkout, under vitest and in an installed package.
import { fileURLToPath } from "node:url";

/** True when this module runs as TypeScript source (vitest, tsx), false when it runs from dist/. */
export const FROM_SOURCE = import.meta.url.endsWith(".ts");

/** The package root: the directory holding package.json, bin/ and proto/. */
export const PACKAGE_ROOT = fileURLToPath(new URL(FROM_SOURCE ? "../" : "../../", import.meta.url));

/**
 * The script that runs this same code's CLI in a child process: the published bin (compiled JS) when
 * running from dist/, the source launcher (through tsx) when running from source, so a spawned harness
 * node always runs the code its host runs.
 */
export const CLI_SCRIPT = fileURLToPath(
  new URL(FROM_SOURCE ? "../scripts/harnesshost-src.mjs" : "../../bin/harnesshost.js", import.meta.url),
);
