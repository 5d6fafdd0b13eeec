// One way in from the edges: the transports (src/server/, src/http/) and the CLI (src/cli/) reach a
// host's sessions through the host — its read side (host.reads), its catalog, the Placer — and never
// hold its journal. Invariant: no module of those folders names `host.journal` or calls a method on a
// `.journal` it reached through something else, so every answer an edge gives comes through the host.
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const repo = resolve(import.meta.dirname, "../..");

function tsFiles(dir: string): string[] {
  return readdirSync(join(repo, dir), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts"))
    .map((f) => join(dir, f));
}

describe("the edges", () => {
  it("theEdgesNeverHoldTheHostsJournal: no host.journal and no .journal. in src/server, src/http, src/cli", () => {
    const files = ["src/server", "src/http", "src/cli"].flatMap(tsFiles);
    expect(files.length).toBeGreaterThan(50);
    const hits = files.flatMap((file) =>
      readFileSync(join(repo, file), "utf8")
        .split("\n")
        .flatMap((line, i) => (/host\.journal|\.journal\./.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(hits).toEqual([]);
  });
});
