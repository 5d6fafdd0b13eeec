// What `harnesshost/client` (and with it `harnesshost exec --server`) loads (docs/packaging.md, "What the
// client loads"). Invariant: the client loads the wire's client half only — no server handlers, no
// tracing API, no host, placement, journal store or runtime — so a process that only talks to a host
// pays for gRPC and the messages, nothing else — both as the package exports it (the bundled entry,
// its files read as the modules they hold) and as the compiled modules.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { unbundled } from "../support/bundle-meta.js";
import { REPO } from "../support/cli-entry.js";

const dir = mkdtempSync(join(tmpdir(), "hh-client-imports-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Every file: URL the ESM loader loads while `code` runs in a fresh node. */
function loadedBy(code: string): string[] {
  const hook = join(dir, "trace.mjs");
  writeFileSync(
    hook,
    `import { register } from "node:module";
register("data:text/javascript," + encodeURIComponent(
  "export async function load(url, context, next) { if (url.startsWith('file:')) process.stderr.write('LOADED ' + url + '\\\\n'); return next(url, context); }"));
`,
  );
  const res = spawnSync(process.execPath, ["--import", pathToFileURL(hook).href, "--input-type=module", "-e", code], {
    cwd: REPO,
    encoding: "utf8",
  });
  expect(res.status, res.stderr).toBe(0);
  return res.stderr
    .split("\n")
    .filter((l) => l.startsWith("LOADED "))
    .map((l) => l.slice("LOADED ".length));
}

describe("harnesshost/client", () => {
  it.each(["harnesshost/client", pathToFileURL(join(REPO, "dist/src/client/index.js")).href])(
    "theClientLoadsNoServerCode (%s)",
    (client) => {
      const loaded = unbundled(loadedBy(`await import(${JSON.stringify(client)});`));
      expect(loaded.some((u) => u.endsWith("/dist/src/wire/client.js"))).toBe(true);
      const forbidden = loaded.filter((u) =>
        /\/dist\/src\/(wire\/server\.js|obs\/|host\/|placement\/|controller\/|runtime\/|node\/|server\/)|\/node_modules\/(@opentelemetry|better-sqlite3|pg|pino|prom-client|zod)\//.test(
          u,
        ),
      );
      expect(forbidden).toEqual([]);
    },
  );
});
