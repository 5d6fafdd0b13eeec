// The README's "## Scaling" walkthrough runs as written: its sh blocks through real npx in a project
// that installed the packed tarball (test/docs/npx-doc.ts: free ports for 7233–7238, the socket in the
// run's folder) with a fresh PostgreSQL schema in the journal URL; nothing is awaited that the text
// does not await (its servers start with --detach).
import { readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { dropSchemas } from "../journal/postgres-fixture.js";
import { journalUrl, mhSchema } from "./cluster.js";
import { runDoc } from "../docs/npx-doc.js";
import { shBlocks } from "../docs/sh-script.js";
import { projectWorkdir } from "../package/shared.js";

const repo = resolve(import.meta.dirname, "../..");
const README_PG_URL = "postgres://postgres@127.0.0.1:5432/test";
const dirs: string[] = [];
const schemas: string[] = [];
afterAll(async () => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  await dropSchemas(schemas);
});

const blocks = (title: string): string[] => shBlocks(readFileSync(join(repo, "README.md"), "utf8"), `${title}\n`);

describe("README scaling walkthrough", () => {
  it("two hosts on one database serve one echo and one counter session alternately, and a harness registered on A through B", async () => {
    const dir = await projectWorkdir("readme-scaling");
    dirs.push(dir);
    const schema = mhSchema();
    schemas.push(schema);
    // The one substitution beyond npx-doc.ts's: a schema of its own in the README's database URL.
    const script = blocks("Scaling")
      .join("\n")
      .replaceAll(README_PG_URL, `'${journalUrl(schema)}'`);
    const stdout = await runDoc(script, dir);
    const lines = stdout.split("\n");
    expect(lines.slice(0, 5)).toEqual(["echo:two", "echo:three", "echo:one", "echo:two", "echo:three"]);
    expect(lines.filter((l) => /^\d+$/.test(l))).toEqual(["2", "3", "4"]);
    expect(stdout).toMatch(/snapshot memory=true digest=sha256:[0-9a-f]{64}/);
    expect(stdout).toMatch(/ok sess-[0-9a-f]{24}/);
    expect(lines).toContain("echo:hi");
    expect(lines.filter((l) => /^stopped pid \d+$/.test(l))).toHaveLength(3);
  }, 600_000);
});
