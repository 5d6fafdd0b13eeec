// The README's "## Scaling" walkthrough runs as written: its sh blocks, with `npx harnesshost` pointed
// at this checkout, free ports for 7233–7238, a temp socket path and a fresh PostgreSQL schema in the
// journal URL; nothing is awaited that the text does not await (its servers start with --detach).
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { dropSchemas } from "../journal/postgres-fixture.js";
import { journalUrl, mhSchema } from "./cluster.js";
import { bash, freePort, shBlocks, stopPidFiles, strictScript } from "../docs/sh-script.js";

const repo = resolve(import.meta.dirname, "../..");
const README_PG_URL = "postgres://postgres@127.0.0.1:5432/test";
const dirs: string[] = [];
const schemas: string[] = [];
afterAll(async () => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  await dropSchemas(schemas);
});

const blocks = (title: string): string[] => shBlocks(readFileSync(join(repo, "README.md"), "utf8"), `${title}\n`);

/** Points the script at this checkout, fresh ports, a temp dir and `schema`; nothing else changes. */
async function localize(script: string, dir: string, schema: string): Promise<string> {
  let text = script
    .replaceAll("npx harnesshost", `node ${join(repo, "bin/harnesshost.js")}`)
    .replaceAll(README_PG_URL, `'${journalUrl(schema)}'`)
    .replaceAll("/tmp/x.sock", join(dir, "x.sock"));
  for (const port of ["7233", "7234", "7235", "7236", "7237", "7238"])
    text = text.replaceAll(`127.0.0.1:${port}`, `127.0.0.1:${await freePort()}`);
  return strictScript(text);
}

describe("README scaling walkthrough", () => {
  it("two hosts on one database serve one echo and one counter session alternately, and a harness registered on A through B", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hh-mh-readme-"));
    dirs.push(dir);
    const schema = mhSchema();
    schemas.push(schema);
    const script = await localize(blocks("Scaling").join("\n"), dir, schema);
    const stdout = await bash(script, dir, 240_000).finally(() => stopPidFiles(dir));
    const lines = stdout.split("\n");
    expect(lines.slice(0, 5)).toEqual(["echo:two", "echo:three", "echo:one", "echo:two", "echo:three"]);
    expect(lines.filter((l) => /^\d+$/.test(l))).toEqual(["2", "3", "4"]);
    expect(stdout).toMatch(/snapshot memory=true digest=sha256:[0-9a-f]{64}/);
    expect(stdout).toMatch(/ok sess-[0-9a-f]{24}/);
    expect(lines).toContain("echo:hi");
    expect(lines.filter((l) => /^stopped pid \d+$/.test(l))).toHaveLength(3);
  }, 240_000);
});
