// What `harnesshost/client` (and with it `harnesshost exec --server`) loads (docs/packaging.md, "What the
// client loads"). Invariant: the client loads the wire's client half only — no server handlers, no
// tracing API, no host, placement, journal store or runtime — so a process that only talks to a host
// pays for gRPC and the messages, nothing else — both as the package exports it (the bundled entry,
// its files read as the modules they hold) and as the compiled modules.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { unbundled } from "../support/bundle-meta.js";
import { REPO } from "../support/cli-entry.js";

const TRACE = pathToFileURL(join(REPO, "test/fixtures/module-trace.mjs")).href;

/**
 * Every file `code` loads in a fresh node: ES modules and CommonJS (test/fixtures/module-trace.mjs) —
 * the bundle's vendor groups (zod, grpc-js, protobuf-es, pino) load by require().
 */
function loadedBy(code: string): string[] {
  const res = spawnSync(process.execPath, ["--import", TRACE, "--input-type=module", "-e", code], {
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
