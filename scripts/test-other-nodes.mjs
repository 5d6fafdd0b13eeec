#!/usr/bin/env node
// `npm run test:nodes [-- --prepare-only] [-- --with-blocked]`: the unit project and the packed-consumer test
// (test/package, what of it can differ by Node: strict-tsc.ts) again on every other Node release users
// run (the LTS lines pinned in scripts/other-nodes/package.json; the Node that runs `npm test` is the
// floor, 20), the Nodes side by side, each run's output printed whole when it ends. Invariants: the
// binaries come from the npm registry's `node` packages at the exact versions of
// scripts/other-nodes/package-lock.json (`npm ci` there, never by hand); better-sqlite3 — the one
// native addon — is compiled from node_modules' own copy for each Node's ABI once per version (its
// SQLite linked from the floor's build when `npm ci` compiled one: reuseSqlite) and kept in a
// content-keyed cache ($XDG_CACHE_HOME or ~/.cache, harnesshost/better-sqlite3/); the exit code is 0
// only when every run passed.
import { execFileSync, spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { homedir, tmpdir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { runStep } from "./run-step.mjs";

const REPO = resolve(import.meta.dirname, "..");
const NODES_DIR = join(REPO, "scripts/other-nodes");
const HOOK = join(NODES_DIR, "addon-for-this-node.cjs");
const VITEST = join(REPO, "node_modules/vitest/vitest.mjs");
const SQLITE = join(REPO, "node_modules/better-sqlite3");

const { values } = parseArgs({
  options: { "prepare-only": { type: "boolean", default: false }, "with-blocked": { type: "boolean", default: false } },
  strict: true,
});

/**
 * Pinned Nodes a known fault keeps out of `npm test`, each with why; `--with-blocked` runs them too.
 * Printed on every run, so the gap is never silent.
 */
const BLOCKED = {};

function fail(message) {
  process.stderr.write(`test:nodes: ${message}\n`);
  process.exit(1);
}

function readJson(path) {
  return JSON.parse(readFileSync(path, "utf8"));
}

/** The pinned aliases (node22, node24, …), each with the binary `npm ci` puts in its bin/. */
function pinnedNodes() {
  const aliases = Object.keys(readJson(join(NODES_DIR, "package.json")).devDependencies ?? {});
  return aliases.map((alias) => ({ alias, dir: join(NODES_DIR, "node_modules", alias) }));
}

/** `npm ci` in scripts/other-nodes unless what is installed is exactly what its lockfile pins. */
function ensureInstalled(nodes) {
  const installed = join(NODES_DIR, "node_modules/.package-lock.json");
  const current =
    existsSync(installed) &&
    JSON.stringify(readJson(installed).packages) ===
      JSON.stringify(stripRoot(readJson(join(NODES_DIR, "package-lock.json")).packages)) &&
    nodes.every((n) => existsSync(join(n.dir, "bin/node")));
  if (current) return;
  process.stdout.write("test:nodes: installing the pinned Node releases (npm ci in scripts/other-nodes)\n");
  const r = spawnSync("npm", ["ci", "--no-audit", "--no-fund", "--loglevel", "error"], {
    cwd: NODES_DIR,
    stdio: "inherit",
  });
  if (r.status !== 0) fail("npm ci in scripts/other-nodes failed");
  for (const n of nodes) if (!existsSync(join(n.dir, "bin/node"))) fail(`${n.alias}: npm ci left no bin/node`);
}

/** node_modules/.package-lock.json lists the packages without the root entry. */
function stripRoot(packages) {
  const { "": _root, ...rest } = packages;
  return rest;
}

/** The node-gyp that ships with npm (what `npm ci` itself uses to compile addons). */
function nodeGyp() {
  if (process.env.npm_config_node_gyp && existsSync(process.env.npm_config_node_gyp))
    return process.env.npm_config_node_gyp;
  const npmCli =
    process.env.npm_execpath ?? realpathSync(execFileSync("sh", ["-c", "command -v npm"]).toString().trim());
  const gyp = join(dirname(npmCli), "../node_modules/node-gyp/bin/node-gyp.js");
  if (!existsSync(gyp)) fail(`cannot find npm's node-gyp beside ${npmCli}`);
  return gyp;
}

/**
 * The environment without npm's `npm_config_*` settings: node-gyp lets them override its own flags,
 * so under `npm test` a `nodedir` from npm's config (this machine's says /usr) would compile against
 * the headers of the Node that runs npm, not the `--nodedir` given (an addon for the wrong ABI).
 */
function withoutNpmConfig(env) {
  return Object.fromEntries(Object.entries(env).filter(([k]) => !k.toLowerCase().startsWith("npm_config_")));
}

/** Whether `addon` loads on the Node at `node` (a cached build for the wrong ABI is built again). */
function loads(node, addon) {
  const r = spawnSync(node, ["-e", `process.dlopen({ exports: {} }, ${JSON.stringify(addon)})`], {
    stdio: "ignore",
    env: withoutNpmConfig(process.env),
  });
  return r.status === 0;
}

/**
 * SQLite itself as `npm ci` compiled it for the floor Node (node_modules/better-sqlite3's build of its
 * amalgamation, deps/sqlite3/sqlite3.c): plain C that includes no Node header, so the same for every
 * Node ABI, and nine tenths of the compile. Absent when `npm ci` fetched a prebuilt addon instead.
 */
const SQLITE_LIB = join(SQLITE, "build/Release/obj.target/deps/sqlite3.a");

/**
 * Points the `sqlite3` target better-sqlite3's binding.gyp depends on at SQLITE_LIB (its headers from
 * the same package's deps/sqlite3), so node-gyp compiles only better-sqlite3's own C++ (src/, the part
 * that includes the Node headers of `--nodedir`) and links the library the floor's build made from the
 * same sources. better-sqlite3's binding.gyp — flags, defines, link options — is used as shipped.
 */
function reuseSqlite(work) {
  const gyp = {
    targets: [
      {
        target_name: "sqlite3",
        type: "none",
        direct_dependent_settings: { include_dirs: [join(SQLITE, "deps/sqlite3")], libraries: [SQLITE_LIB] },
      },
    ],
  };
  writeFileSync(join(work, "deps/sqlite3.gyp"), `${JSON.stringify(gyp, null, 2)}\n`);
}

/** better-sqlite3's addon for the Node at `node`, compiled once per (version, ABI, platform). */
function ensureAddon(n, node) {
  const [abi, platform, arch] = execFileSync(node, [
    "-p",
    "[process.versions.modules, process.platform, process.arch].join(' ')",
  ])
    .toString()
    .trim()
    .split(" ");
  const version = readJson(join(SQLITE, "package.json")).version;
  const cacheRoot = process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache");
  const dir = join(cacheRoot, "harnesshost/better-sqlite3", `${version}-abi${abi}-${platform}-${arch}`);
  const addon = join(dir, "better_sqlite3.node");
  if (existsSync(addon) && loads(node, addon)) return addon;
  // The registry's node package installs node-<platform>-<arch> (headers in include/node) beside it.
  const headers = join(n.dir, "node_modules", `node-${platform}-${arch}`);
  if (!existsSync(join(headers, "include/node/node.h"))) fail(`${n.alias}: no Node headers in ${headers}`);
  process.stdout.write(
    `test:nodes: compiling better-sqlite3 ${version} for ${n.alias} (ABI ${abi}); cached in ${dir}\n`,
  );
  const work = mkdtempSync(join(tmpdir(), "hh-sqlite-addon-"));
  try {
    for (const part of ["binding.gyp", "deps", "src", "package.json"])
      cpSync(join(SQLITE, part), join(work, part), { recursive: true });
    if (existsSync(SQLITE_LIB)) reuseSqlite(work);
    const r = spawnSync(
      node,
      [nodeGyp(), "rebuild", "--release", `--nodedir=${headers}`, "-j", "max", "--loglevel", "warn"],
      {
        cwd: work,
        stdio: ["ignore", "pipe", "pipe"],
        maxBuffer: 64 << 20,
        env: { ...withoutNpmConfig(process.env), PATH: `${dirname(node)}${delimiter}${process.env.PATH ?? ""}` },
      },
    );
    if (r.status !== 0) fail(`${n.alias}: compiling better-sqlite3 failed:\n${r.stdout}${r.stderr}${r.error ?? ""}`);
    mkdirSync(dirname(dir), { recursive: true });
    const staged = `${dir}.tmp-${process.pid}`;
    rmSync(staged, { recursive: true, force: true });
    mkdirSync(staged);
    cpSync(join(work, "build/Release/better_sqlite3.node"), join(staged, "better_sqlite3.node"));
    if (!loads(node, join(staged, "better_sqlite3.node")))
      fail(`${n.alias}: the better-sqlite3 just compiled for ABI ${abi} does not load on ${node}`);
    rmSync(dir, { recursive: true, force: true });
    renameSync(staged, dir);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return addon;
}

const nodes = pinnedNodes();
if (nodes.length === 0) fail("scripts/other-nodes/package.json pins no Node release");
ensureInstalled(nodes);
const prepared = nodes.map((n) => {
  const node = join(n.dir, "bin/node");
  return { ...n, node, addon: ensureAddon(n, node) };
});
if (values["prepare-only"]) process.exit(0);

/** One Node's runs, one after the other, each one's output printed whole when it ends. */
async function runOn(n) {
  const version = execFileSync(n.node, ["--version"]).toString().trim();
  const env = {
    ...process.env,
    // npm, npx and `#!/usr/bin/env node` scripts the tests start run on this Node too.
    PATH: `${dirname(n.node)}${delimiter}${process.env.PATH ?? ""}`,
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --require ${HOOK}`.trim(),
    HARNESSHOST_SQLITE_ADDON: n.addon,
    // test/package/ runs here only what can differ by Node (test/package/strict-tsc.ts, OTHER_NODE).
    HARNESSHOST_OTHER_NODE: version,
  };
  let ok = true;
  for (const args of [
    ["--project", "unit"],
    ["--project", "e2e", "test/package/"],
  ]) {
    const name = `Node ${version}: vitest run ${args.join(" ")}`;
    const r = await runStep(name, n.node, [VITEST, "run", ...args], { held: true, env, cwd: REPO });
    const verdict = r.ok ? "passed" : "FAILED";
    process.stdout.write(
      `\n── test:nodes: ${name}: ${verdict} (${(r.ms / 1000).toFixed(0)} s) ──\n${r.output.trimEnd()}\n`,
    );
    ok &&= r.ok;
  }
  return ok;
}

process.stdout.write(
  "test:nodes: test/package/ runs here what can differ by Node; its tarball checks (file list, publint, attw) " +
    "and strict TypeScript consumers are skipped, their verdict being the floor Node's (HARNESSHOST_OTHER_NODE; docs/packaging.md)\n",
);
const running = prepared.filter((n) => values["with-blocked"] || !(n.alias in BLOCKED));
for (const n of prepared)
  if (!running.includes(n)) process.stdout.write(`test:nodes: ${n.alias} not run: ${BLOCKED[n.alias]}\n`);
// The Nodes run side by side: most of a run is one process waiting on another (npm, tsc, a server).
const results = await Promise.all(running.map(runOn));
process.exit(results.every(Boolean) ? 0 : 1);
