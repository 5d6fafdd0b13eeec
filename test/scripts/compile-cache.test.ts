// The V8 code cache the bundle's vendor groups load through (scripts/compile-cache.cjs). Invariant: a
// cache entry can make a load faster and nothing else — what runs is always the source file as it is
// now; a missing, stale, corrupt, foreign or unwritable cache is ignored and never stops the load.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

type CacheState = "used" | "absent" | "rejected" | "off" | "written";
const LOADER = resolve(import.meta.dirname, "../../scripts/compile-cache.cjs");
const { cacheDir } = createRequire(import.meta.url)(LOADER) as {
  cacheDir(env: Record<string, string | undefined>): string | undefined;
};

const root = mkdtempSync(join(tmpdir(), "hh-compile-cache-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;

/** A fresh source file and cache directory. */
function fixture(source: string): { file: string; dir: string } {
  const at = join(root, String(n++));
  mkdirSync(at, { recursive: true });
  const file = join(at, "code.cjs");
  writeFileSync(file, source);
  return { file, dir: join(at, "cache") };
}

/**
 * Loads `file` in a fresh node (V8 keeps compiled code per process, so only a new process shows what
 * the cache on disk does); returns its exports' `value` and the cache states reported, the write's
 * (on the timer or at exit) included.
 */
function load(file: string, dir: string | undefined, flags: string[] = []): { value: unknown; states: CacheState[] } {
  const code = `
const { writeSync } = require("node:fs");
const states = [];
const out = require(${JSON.stringify(LOADER)}).loadCompiled(${JSON.stringify(file)}, {
  dir: ${dir === undefined ? "undefined" : JSON.stringify(dir)}, writeAfterMs: 0, onCache: (s) => states.push(s) });
process.on("exit", () => writeSync(1, JSON.stringify({ value: out.value, states })));`;
  return JSON.parse(execFileSync(process.execPath, [...flags, "-e", code], { encoding: "utf8" })) as {
    value: unknown;
    states: CacheState[];
  };
}

const SOURCE = "module.exports = { value: 1, twice: (x) => x * 2 };\n";
const entries = (dir: string): string[] => readdirSync(dir).filter((f) => f.endsWith(".v8"));

describe("compile cache", () => {
  it("aSecondLoadUsesTheEntryTheFirstWrote", () => {
    const { file, dir } = fixture(SOURCE);
    const first = load(file, dir);
    expect(first.states).toEqual(["absent", "written"]);
    expect(entries(dir)).toHaveLength(1);
    const second = load(file, dir);
    expect(second.states).toEqual(["used"]);
    expect(second.value).toBe(1);
  });

  it("aChangedSourceOfTheSameLengthRunsTheNewCodeNotTheCachedOne", () => {
    const { file, dir } = fixture(SOURCE);
    load(file, dir);
    writeFileSync(file, SOURCE.replace("value: 1", "value: 2"));
    const changed = load(file, dir);
    expect(changed.states[0]).toBe("absent");
    expect(changed.value).toBe(2);
    // The old source's entry is replaced, not kept beside it.
    expect(entries(dir)).toHaveLength(1);
  });

  it("startsWithOtherNodeFlagsKeepAnEntryEachInsteadOfReplacingOne", () => {
    const { file, dir } = fixture(SOURCE);
    const flags = ["--max-old-space-size=300"];
    expect(load(file, dir).states).toEqual(["absent", "written"]);
    expect(load(file, dir, flags).states).toEqual(["absent", "written"]);
    expect(entries(dir)).toHaveLength(2);
    expect(load(file, dir).states).toEqual(["used"]);
    expect(load(file, dir, flags).states).toEqual(["used"]);
  });

  it("aCorruptEntryIsIgnoredAndRewritten", () => {
    const { file, dir } = fixture(SOURCE);
    load(file, dir);
    const entry = join(dir, entries(dir)[0]!);
    const bytes = readFileSync(entry);
    const at = bytes.length - 10;
    bytes[at] = (bytes[at] ?? 0) ^ 0xff; // one flipped byte in V8's data: the stored digest no longer matches
    writeFileSync(entry, bytes);
    const again = load(file, dir);
    expect(again.states).toEqual(["absent", "written"]);
    expect(again.value).toBe(1);
    expect(load(file, dir).states).toEqual(["used"]);
  });

  it("anEntryWithAValidDigestThatV8RefusesIsIgnored", () => {
    const { file, dir } = fixture(SOURCE);
    load(file, dir);
    const entry = join(dir, entries(dir)[0]!);
    const garbage = Buffer.alloc(4096, 7);
    writeFileSync(entry, Buffer.concat([createHash("sha256").update(garbage).digest(), garbage]), { mode: 0o600 });
    const again = load(file, dir);
    expect(again.states).toEqual(["rejected", "written"]);
    expect(again.value).toBe(1);
  });

  it("anEntryOthersCanWriteIsIgnored", () => {
    const { file, dir } = fixture(SOURCE);
    load(file, dir);
    chmodSync(join(dir, entries(dir)[0]!), 0o666);
    expect(load(file, dir).states[0]).toBe("absent");
  });

  it("anUnwritableCacheDirectoryNeverStopsTheLoad", () => {
    const { file } = fixture(SOURCE);
    const notADir = join(root, `file-${n++}`);
    writeFileSync(notADir, "");
    const res = load(file, join(notADir, "cache"));
    expect(res.states).toEqual(["absent"]);
    expect(res.value).toBe(1);
  });

  it("offWritesNothing", () => {
    const { file, dir } = fixture(SOURCE);
    const res = load(file, undefined);
    expect(res.states).toEqual(["off"]);
    expect(() => readdirSync(dir)).toThrow();
    expect(cacheDir({ HARNESSHOST_COMPILE_CACHE: "off" })).toBeUndefined();
    expect(cacheDir({ HARNESSHOST_COMPILE_CACHE: "/x/y" })).toBe("/x/y");
    expect(cacheDir({ XDG_CACHE_HOME: "/c" })).toBe("/c/harnesshost/compile-cache");
  });
});
