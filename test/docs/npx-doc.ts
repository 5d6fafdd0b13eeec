// Runs a document's shell blocks as a reader runs them: `npx harnesshost …` exactly as written, in a
// fresh folder of a project that installed the packed tarball (test/package/shared.ts: `npm pack` once,
// installed offline with tsx, as docs/harness-authoring.md §0 says). Invariant: the only changes made
// to a block are these, each because a test cannot do otherwise:
// - ports: every 127.0.0.1:7xxx (the documents' host, node and model ports; not PostgreSQL's 5432)
//   gets a free port, and a `serve` without --addr is given its default
//   addresses (7233, 7234, 7235) explicitly so they are remapped too — tests never bind the defaults,
//   which a developer's own host may hold, and test files run in parallel;
// - `unix:///tmp/NAME` sockets live in the run's folder (parallel runs must not share one);
// - repository files a block names (`test/…`, `harnesses/…`: a reader runs those from a clone) are
//   given as absolute paths into this checkout.
// No wait is added anywhere (strictScript), so a race in the text fails here too.
import { join } from "node:path";
import { REPO } from "../package/packed.js";
import { bash, freePort, stopPidFiles, strictScript } from "./sh-script.js";

/** The block with the substitutions above (continuation lines joined), as a strict bash script. */
export async function localizeDoc(script: string, dir: string): Promise<string> {
  const joined = script.replace(/\\\n\s*/g, " ");
  const withDefaults = joined
    .split("\n")
    .map((line) =>
      /\bharnesshost serve\b/.test(line) && !line.includes("--addr")
        ? line.replace(
            /\bharnesshost serve\b/,
            "harnesshost serve --addr 127.0.0.1:7233 --registry-addr 127.0.0.1:7234 --http-addr 127.0.0.1:7235",
          )
        : line,
    )
    .join("\n");
  const ports = new Map<string, string>();
  for (const m of withDefaults.matchAll(/127\.0\.0\.1:(7\d{3})\b/g)) ports.set(m[1]!, "");
  for (const p of ports.keys()) ports.set(p, String(await freePort()));
  return strictScript(
    withDefaults
      .replace(/127\.0\.0\.1:(7\d{3})\b/g, (_, p: string) => `127.0.0.1:${ports.get(p) ?? p}`)
      .replaceAll("unix:///tmp/", `unix://${dir}/`)
      .replace(/(^|[\s=])(test|harnesses)\//gm, (_, before: string, top: string) => `${before}${join(REPO, top)}/`),
  );
}

/** Runs a document's block in `dir` (a folder of the shared project); stops what it left running. */
export async function runDoc(script: string, dir: string, timeoutMs = 600_000): Promise<string> {
  try {
    return await bash(await localizeDoc(script, dir), dir, timeoutMs);
  } finally {
    stopPidFiles(dir);
  }
}
