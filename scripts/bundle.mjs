#!/usr/bin/env node
// The bundled entries of the package (`npm run build` runs this after tsc; docs/performance.md,
// "`serve` ready"): every public entry point of package.json "exports" and the CLI, built by esbuild
// from the compiled dist/src into dist/bundle/ in ONE build with code splitting. Invariants: each
// module of dist/src (and each bundled package) is in exactly one output file, so the CLI and a user's
// harness, tools or model module importing `harnesshost/*` share one copy of every class the host
// checks with `instanceof` (HostError and its kin) and of every module-level table; an entry's output
// name and its source both come from package.json (the "import" path names the output, the "types"
// path names the compiled module beside it), so the exports cannot point at a file this build does not
// make. The packages in BUNDLED are bundled; those in VENDORED are built apart, one CommonJS file per
// group that dist/bundle/vendor-GROUP.cjs loads through a V8 code cache (scripts/compile-cache.cjs), every
// import of them going through that one copy; the rest load from node_modules as before.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const BUNDLE_DIR = "dist/bundle";
/** What the build tells the tests: which dist/src modules and packages each output file holds. Not shipped. */
export const BUNDLE_META = "dist/bundle-meta.json";
/** The bin's entry: `main` of the CLI. */
const CLI = { cli: "dist/src/cli/run.js" };

/**
 * The packages bundled with the host's modules (and the packages they import in turn): what every
 * command's start path loads. Any other package the host imports stays in node_modules and loads from
 * there: the native SQLite binding, the PostgreSQL driver and the OpenTelemetry SDK (loaded only for a
 * postgres:// journal and an OTLP endpoint), prom-client and server reflection's protobufjs stack (loaded
 * by require() on use), the optional peers of the adapters, tsx, and vitest (harnesshost/testing).
 * Two corners of bundled packages find files beside their own module (__dirname) and so do not work
 * from the bundle; the host uses neither: pino's worker transports (the host logs to a destination
 * stream) and grpc-js's channelz and ORCA services (never registered).
 */
const BUNDLED = new Set(["@connectrpc/connect", "@connectrpc/connect-node", "canonicalize"]);
/**
 * The packages built apart from the ES module bundle, one CommonJS file per group
 * (dist/bundle/vendor-GROUP.code.cjs), which dist/bundle/vendor-GROUP.cjs loads through a V8 code cache
 * (scripts/compile-cache.cjs): the largest code of every start, compiled once per user and version
 * instead of on every start. Every import of them — from the host's modules or from a bundled package —
 * goes through that one loaded copy (a facade module: `require("./vendor-GROUP.cjs").load(specifier)`).
 * A group's packages import nothing of another group.
 */
export const VENDORED = {
  zod: ["zod"],
  grpc: ["@grpc/grpc-js"],
  protobuf: ["@bufbuild/protobuf"],
  pino: ["pino"],
};
const GROUP_OF = new Map(Object.entries(VENDORED).flatMap(([group, pkgs]) => pkgs.map((p) => [p, group])));
/** Never bundled, whoever imports them. */
const EXTERNAL = new Set([
  "better-sqlite3",
  "pg",
  "@grpc/proto-loader",
  "@grpc/reflection",
  "grpc-health-check",
  "protobufjs",
  "prom-client",
]);

/** The package a bare specifier names (`@scope/name/sub` → `@scope/name`). */
const packageOf = (specifier) =>
  specifier
    .split("/")
    .slice(0, specifier.startsWith("@") ? 2 : 1)
    .join("/");

/**
 * The facade of a vendored module: its exports, taken once from the vendor group's one copy. With
 * `names` (the module's export names, read from the built group) an ES module whose exports esbuild
 * links like any other; without (the first pass, which only finds the specifiers) a CommonJS one.
 */
function facade(group, specifier, names) {
  const load = `require("./vendor-${group}.cjs").load(${JSON.stringify(specifier)})`;
  if (names === undefined) return `module.exports = ${load};\n`;
  const bind = names.map((n, i) => `const e${i} = m[${JSON.stringify(n)}];`).join("\n");
  const list = names.map((n, i) => `e${i} as ${JSON.stringify(n)}`).join(", ");
  return `const m = ${load};\n${bind}\nexport { ${list} };\n`;
}

/**
 * esbuild plugin: from the host's own modules only BUNDLED packages are followed; EXTERNAL ones never;
 * a VENDORED package is its facade (recorded in `specifiers`, by group; `exportNames` by specifier).
 */
const externals = (specifiers, exportNames) => ({
  name: "harnesshost-externals",
  setup(b) {
    b.onResolve({ filter: /^\.\/vendor-[a-z]+\.cjs$/ }, (args) =>
      args.namespace === "vendor" ? { path: args.path, external: true } : undefined,
    );
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith("node:")) return undefined;
      const pkg = packageOf(args.path);
      const group = GROUP_OF.get(pkg);
      if (group !== undefined) {
        specifiers[group] ??= new Set();
        specifiers[group].add(args.path);
        return { path: args.path, namespace: "vendor", pluginData: group };
      }
      const fromHost = !args.importer.includes("/node_modules/");
      if (EXTERNAL.has(pkg) || (fromHost && !BUNDLED.has(pkg))) return { path: args.path, external: true };
      return undefined;
    });
    b.onLoad({ filter: /.*/, namespace: "vendor" }, (args) => ({
      contents: facade(args.pluginData, args.path, exportNames?.get(args.path)),
      loader: "js",
    }));
  },
});

/** esbuild plugin for a vendor group's build: its packages' own dependencies are bundled, other groups never. */
const vendorExternals = (group) => ({
  name: "harnesshost-vendor-externals",
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith("node:")) return undefined;
      const pkg = packageOf(args.path);
      const other = GROUP_OF.get(pkg);
      if (other !== undefined && other !== group)
        return { errors: [{ text: `vendor group ${group} imports ${args.path} of group ${other}: two copies` }] };
      if (EXTERNAL.has(pkg)) return { path: args.path, external: true };
      return undefined;
    });
  },
});

/** A specifier's whole namespace is needed (a namespace import, a re-export, a dynamic import). */
const ALL = "*";

/**
 * The names each vendored specifier is imported by, read from the first pass's input files that import
 * it (`used`: specifier → Set of names, or ALL). Anything but a plain `import { a, b as c } from "…"` or
 * `export { a } from "…"` counts as ALL, so the vendor group can only ever hold more than the bundle asks for, never less (and
 * a name missing from it fails the second pass's build: esbuild checks every import against the facade).
 */
function collectUsedNames(metafile, used) {
  const escapeRe = (t) => t.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  for (const [input, info] of Object.entries(metafile.inputs)) {
    const specs = info.imports.filter((i) => i.path.startsWith("vendor:")).map((i) => i.path.slice("vendor:".length));
    if (specs.length === 0) continue;
    const source = readFileSync(join(ROOT, input), "utf8");
    for (const spec of specs) {
      const names = used.get(spec) ?? new Set();
      used.set(spec, names);
      if (names === ALL) continue;
      const from = `\\s*from\\s*["']${escapeRe(spec)}["']`;
      const named = [...source.matchAll(new RegExp(`(?:import|export)\\s*\\{([^}]*)\\}${from}`, "g"))];
      const all = new RegExp(
        `import\\s*\\*\\s*as\\s+[\\w$]+${from}|import\\s+[\\w$]+\\s*(,[^;]*)?${from}|export\\s*\\*[^;]*${from}|(import|require)\\s*\\(\\s*["']${escapeRe(spec)}["']`,
      );
      if (named.length === 0 || all.test(source)) {
        used.set(spec, ALL);
        continue;
      }
      for (const m of named)
        for (const part of m[1].split(",")) {
          const name = part.trim().split(/\s+as\s+/)[0];
          if (name) names.add(name);
        }
    }
  }
}

/**
 * The source of a vendor group: `load(specifier)` is that module's exports — the names the bundle
 * imports (or its whole namespace). Imported as ES modules, so esbuild takes each package's ES build and
 * drops what no name reaches (as the host's bundle did: protobuf-es's unused well-known types are never
 * booted), not its CommonJS one.
 */
function vendorEntry(specs, used) {
  const sorted = [...specs].sort();
  const lines = [];
  const table = [];
  for (const [i, s] of sorted.entries()) {
    const names = used.get(s) ?? ALL;
    if (names === ALL) {
      lines.push(`import * as m${i} from ${JSON.stringify(s)};`);
      table.push(`  ${JSON.stringify(s)}: m${i},`);
    } else {
      const list = [...names].sort();
      lines.push(`import { ${list.map((n, j) => `${n} as m${i}_${j}`).join(", ")} } from ${JSON.stringify(s)};`);
      table.push(`  ${JSON.stringify(s)}: { ${list.map((n, j) => `${JSON.stringify(n)}: m${i}_${j}`).join(", ")} },`);
    }
  }
  return `${lines.join("\n")}\nconst modules = {\n${table.join("\n")}\n};\nexport const load = (specifier) => modules[specifier];\n`;
}

/** dist/bundle/vendor-GROUP.cjs: loads the group's code through the compile cache. */
const vendorStub = (group) =>
  `"use strict";\n// Generated by scripts/bundle.mjs: the ${group} vendor group (${VENDORED[group].join(", ")}), loaded through the compile cache.\nmodule.exports = require("./compile-cache.cjs").loadCompiled(require("node:path").join(__dirname, "vendor-${group}.code.cjs"));\n`;

/** The export names of each specifier of a built vendor group (evaluated here, in the build's process). */
function exportNamesOf(code, specs, into) {
  const module = { exports: {} };
  new Function("exports", "require", "module", "__filename", "__dirname", code)(
    module.exports,
    createRequire(join(ROOT, BUNDLE_DIR, "vendor.cjs")),
    module,
    "",
    "",
  );
  for (const s of specs)
    into.set(
      s,
      Object.keys(module.exports.load(s)).filter((n) => n !== "__esModule" && n !== "default"),
    );
}

/**
 * Builds each vendor group; returns its output files, by the stub's path the inputs it holds, and the
 * export names of every specifier.
 */
async function buildVendor(build, specifiers, used) {
  const files = [];
  const outputs = {};
  const names = new Map();
  const dir = join(ROOT, BUNDLE_DIR);
  files.push({ path: join(dir, "compile-cache.cjs"), contents: readFileSync(join(ROOT, "scripts/compile-cache.cjs")) });
  for (const group of Object.keys(VENDORED)) {
    const specs = specifiers[group];
    if (specs === undefined) continue;
    const result = await build({
      write: false,
      absWorkingDir: ROOT,
      stdin: { contents: vendorEntry(specs, used), resolveDir: ROOT, sourcefile: `vendor-${group}-entry.mjs` },
      outfile: join(dir, `vendor-${group}.code.cjs`),
      bundle: true,
      format: "cjs",
      platform: "node",
      target: "node20",
      plugins: [vendorExternals(group)],
      metafile: true,
      logLevel: "warning",
    });
    files.push(...result.outputFiles);
    exportNamesOf(result.outputFiles[0].text, specs, names);
    files.push({ path: join(dir, `vendor-${group}.cjs`), contents: Buffer.from(vendorStub(group)) });
    const inputs = Object.values(result.metafile.outputs).flatMap((o) => Object.keys(o.inputs));
    outputs[`${BUNDLE_DIR}/vendor-${group}.cjs`] = inputs.filter((i) => i.includes("node_modules/"));
  }
  return { files, outputs, names };
}

/** Bundled CommonJS (grpc-js, pino…) calls require() for Node's built-ins: each output file gets a real one. */
const BANNER =
  'import { createRequire as __harnesshostRequire } from "node:module";\nconst require = __harnesshostRequire(import.meta.url);';

/** `{ outputName: "dist/src/…js" }` for every export of package.json, and the CLI. */
export function bundleEntries(pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"))) {
  const entries = { ...CLI };
  for (const [subpath, target] of Object.entries(pkg.exports)) {
    if (typeof target === "string") continue; // ./package.json
    const out = new RegExp(`^\\./${BUNDLE_DIR}/([\\w-]+)\\.js$`).exec(target.import)?.[1];
    const src = /^\.\/(dist\/src\/.+)\.d\.ts$/.exec(target.types)?.[1];
    if (!out || !src)
      throw new Error(
        `package.json exports[${JSON.stringify(subpath)}]: import must be ./${BUNDLE_DIR}/NAME.js and types ./dist/src/….d.ts`,
      );
    if (out in entries) throw new Error(`package.json exports: two entries named ${out}`);
    entries[out] = `${src}.js`;
  }
  return entries;
}

/**
 * Puts `files` (esbuild's outputs, absolute paths) in place of what dist/bundle/ holds, touching only
 * what differs: a file with the same bytes is left alone, a changed one is replaced by a rename (never
 * seen half-written), a file no output names is removed last. A rebuild of an unchanged tree (`npm
 * pack` runs `prepare` while other processes run the bin) therefore changes nothing they could load.
 */
function syncOutputs(files) {
  const dir = join(ROOT, BUNDLE_DIR);
  mkdirSync(dir, { recursive: true });
  const kept = new Set();
  for (const f of files) {
    kept.add(f.path);
    mkdirSync(dirname(f.path), { recursive: true });
    if (existsSync(f.path) && Buffer.compare(readFileSync(f.path), f.contents) === 0) continue;
    const staged = `${f.path}.tmp-${process.pid}`;
    writeFileSync(staged, f.contents);
    renameSync(staged, f.path);
  }
  for (const name of readdirSync(dir, { recursive: true })) {
    const path = join(dir, String(name));
    if (!kept.has(path) && statSync(path).isFile()) rmSync(path, { force: true });
  }
}

/** Builds dist/bundle/ (only what changed is rewritten: syncOutputs) and dist/bundle-meta.json. */
export async function bundle() {
  const { build } = await import("esbuild");
  const entries = bundleEntries();
  const specifiers = {};
  const options = {
    write: false,
    absWorkingDir: ROOT,
    entryPoints: entries,
    outdir: BUNDLE_DIR,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    banner: { js: BANNER },
    logLevel: "warning",
  };
  // First pass: which vendored modules are imported (and so which the vendor groups must hold).
  const first = await build({ ...options, plugins: [externals(specifiers)], metafile: true });
  const used = new Map();
  collectUsedNames(first.metafile, used);
  const vendor = await buildVendor(build, specifiers, used);
  const result = await build({
    ...options,
    plugins: [externals({}, vendor.names)],
    // Stack traces map through dist/src's own maps (sources inline) to the TypeScript.
    sourcemap: "linked",
    sourcesContent: false,
    metafile: true,
  });
  syncOutputs([...result.outputFiles, ...vendor.files]);
  const outputs = {};
  for (const [file, out] of Object.entries(result.metafile.outputs))
    if (file.endsWith(".js")) outputs[file] = Object.keys(out.inputs).filter((i) => !i.startsWith("vendor:"));
  Object.assign(outputs, vendor.outputs);
  // Rewritten (by a rename) on every build: its time says when the bundle was last made current.
  const meta = join(ROOT, BUNDLE_META);
  writeFileSync(`${meta}.tmp-${process.pid}`, `${JSON.stringify({ entries, outputs }, null, 1)}\n`);
  renameSync(`${meta}.tmp-${process.pid}`, meta);
  return { entries, outputs };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { outputs } = await bundle();
  const files = Object.keys(outputs).length;
  process.stdout.write(`bundled ${relative(ROOT, join(ROOT, BUNDLE_DIR))}/: ${files} files\n`);
}
