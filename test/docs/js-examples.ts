// The README's "Use it from code" examples as runnable modules: each ```js block, pointed at a given
// host, and the output its comments promise (the `// …` after each console.log).
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { codeBlocks } from "./sh-script.js";

export const README = join(resolve(import.meta.dirname, "../.."), "README.md");

export interface JsExample {
  /** The block, verbatim. */
  readonly code: string;
  /** What the block's console.log lines print, in order. */
  readonly expected: readonly string[];
}

export function useFromCodeExamples(): JsExample[] {
  return codeBlocks(readFileSync(README, "utf8"), "Use it from code", "js").map((code) => ({
    code,
    expected: [...code.matchAll(/console\.log\(.*\);\s*\/\/ (.*)$/gm)].map((m) => m[1]!),
  }));
}

/**
 * The example with the documented default addresses replaced by a running host's, and its fixed
 * `/tmp/` socket moved to `socketDir` when given (test files run in parallel).
 */
export function pointAt(code: string, addr: string, registryAddr: string, socketDir?: string): string {
  const pointed = code.replaceAll("127.0.0.1:7233", addr).replaceAll("127.0.0.1:7234", registryAddr);
  return socketDir === undefined ? pointed : pointed.replaceAll("unix:///tmp/", `unix://${socketDir}/`);
}
