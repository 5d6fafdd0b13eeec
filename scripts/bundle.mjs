#!/usr/bin/env node
// The bundled entries of the package (`npm run build` runs this after tsc; docs/performance.md,
// "`serve` ready"): every public entry point of package.json "exports" and the CLI, built by esbuild
// from the compiled dist/src into dist/bundle/ in ONE build with code splitting. Invariants: each
// module of dist/src (and each bundled package) is in exactly one output file, so the CLI and a user's
// harness, tools or model module importing `harnesshost/*` share one copy of every class the host
// checks with `instanceof` (HostError and its kin) and of every module-level table; an entry's output
// name and its source both come from package.json (the "import" path names the output, the "types"
// path names the compiled module beside it), so the exports cannot point at a file this build does not
// make. Only the packages in BUNDLED are bundled; the rest load from node_modules as before.
import { readFileSync, rmSync, writeFileSync } from "node:fs";
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
const BUNDLED = new Set([
  "@bufbuild/protobuf",
  "@connectrpc/connect",
  "@connectrpc/connect-node",
  "@grpc/grpc-js",
  "canonicalize",
  "pino",
  "zod",
]);
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

/** esbuild plugin: from the host's own modules only BUNDLED packages are followed; EXTERNAL ones never. */
const externals = {
  name: "harnesshost-externals",
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith("node:")) return undefined;
      const pkg = packageOf(args.path);
      const fromHost = !args.importer.includes("/node_modules/");
      if (EXTERNAL.has(pkg) || (fromHost && !BUNDLED.has(pkg))) return { path: args.path, external: true };
      return undefined;
    });
  },
};

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

/** Builds dist/bundle/ (removed first) and dist/bundle-meta.json. */
export async function bundle() {
  const { build } = await import("esbuild");
  const entries = bundleEntries();
  rmSync(join(ROOT, BUNDLE_DIR), { recursive: true, force: true });
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: entries,
    outdir: BUNDLE_DIR,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    plugins: [externals],
    banner: { js: BANNER },
    // Stack traces map through dist/src's own maps (sources inline) to the TypeScript.
    sourcemap: "linked",
    sourcesContent: false,
    metafile: true,
    logLevel: "warning",
  });
  const outputs = {};
  for (const [file, out] of Object.entries(result.metafile.outputs))
    if (file.endsWith(".js")) outputs[file] = Object.keys(out.inputs);
  writeFileSync(join(ROOT, BUNDLE_META), `${JSON.stringify({ entries, outputs }, null, 1)}\n`);
  return { entries, outputs };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { outputs } = await bundle();
  const files = Object.keys(outputs).length;
  process.stdout.write(`bundled ${relative(ROOT, join(ROOT, BUNDLE_DIR))}/: ${files} files\n`);
}
