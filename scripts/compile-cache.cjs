// Loads one vendored CommonJS bundle of dist/bundle/ (scripts/bundle.mjs: zod, grpc-js, protobuf-es and
// pino are each built into a `vendor-NAME.code.cjs`) through a V8 code cache, so a start does not
// compile them again (docs/performance.md, "`serve` ready"; Node 20 has no module compile cache).
// scripts/bundle.mjs copies this file to dist/bundle/compile-cache.cjs.
// Invariants: the cache can only ever make loading faster, never change what runs or stop a start —
// a cache entry is used only if it was made by this user for this exact source (its SHA-256 is in the
// entry's name) on this Node version and architecture with the same node flags, its bytes match the
// SHA-256 stored with them, and V8 accepts it (`cachedDataRejected` false); anything else (missing,
// stale, corrupt, foreign, unreadable, unwritable) is ignored and the source is compiled as without a
// cache. An entry is written whole (temporary file, then rename), once per process, only when the one
// read was not used.
// HARNESSHOST_COMPILE_CACHE=off turns it off; =DIR puts it in DIR; the default is
// $XDG_CACHE_HOME/harnesshost/compile-cache (~/.cache/… without XDG_CACHE_HOME).
"use strict";
const { createHash } = require("node:crypto");
const fs = require("node:fs");
const Module = require("node:module");
const { homedir } = require("node:os");
const path = require("node:path");
const vm = require("node:vm");

/** When a missing or refused entry is written: this long after the load (so it holds what start-up ran), or at exit. */
const WRITE_AFTER_MS = 1500;
const DIGEST_BYTES = 32;

/** The cache directory, or undefined when turned off. */
function cacheDir(env = process.env) {
  const set = env.HARNESSHOST_COMPILE_CACHE;
  if (set !== undefined && /^(off|0|false|no)?$/i.test(set.trim())) return undefined;
  if (set !== undefined) return path.resolve(set);
  const base = env.XDG_CACHE_HOME || path.join(homedir(), ".cache");
  return path.join(base, "harnesshost", "compile-cache");
}

const sha256 = (bytes) => createHash("sha256").update(bytes).digest();

/** The entry's bytes if it is this user's, not writable by others, and its digest matches; else undefined. */
function readEntry(file) {
  let fd;
  try {
    fd = fs.openSync(file, "r");
    const st = fs.fstatSync(fd);
    if (!st.isFile() || (st.mode & 0o022) !== 0) return undefined;
    if (typeof process.getuid === "function" && st.uid !== process.getuid()) return undefined;
    const bytes = fs.readFileSync(fd);
    if (bytes.length <= DIGEST_BYTES) return undefined;
    const data = bytes.subarray(DIGEST_BYTES);
    return sha256(data).equals(bytes.subarray(0, DIGEST_BYTES)) ? data : undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** Writes the entry whole (digest + data) and removes this file's entries for other sources or Node versions (`keep`: this one's prefix). */
function writeEntry(dir, name, prefix, keep, data) {
  const file = path.join(dir, name);
  const staged = `${file}.tmp-${process.pid}`;
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    // Never into a directory another user could write to (a planted file or link in place of ours).
    const st = fs.statSync(dir);
    if ((st.mode & 0o022) !== 0 || (typeof process.getuid === "function" && st.uid !== process.getuid())) return false;
    fs.writeFileSync(staged, Buffer.concat([sha256(data), data]), { mode: 0o600, flag: "wx" });
    fs.renameSync(staged, file);
    for (const other of fs.readdirSync(dir))
      if (other.startsWith(prefix) && !other.startsWith(keep) && !other.includes(".tmp-"))
        fs.rmSync(path.join(dir, other), { force: true });
    return true;
  } catch {
    // A cache that cannot be written is only a slower next start.
    fs.rmSync(staged, { force: true });
    return false;
  }
}

/**
 * Runs the CommonJS bundle `file` (in its own module scope, `require` resolving from its directory) and
 * returns its `module.exports`, through the code cache when one is usable. `options.dir` overrides the
 * cache directory (undefined: off); `options.writeAfterMs` the delay of the write; `options.onCache` is
 * told what became of the cache: "used", "absent" (none usable was found), "rejected" (V8 refused it) or
 * "off", and, with "written", when an entry has been written (tests).
 */
function loadCompiled(file, options = {}) {
  const source = fs.readFileSync(file, "utf8");
  let dir;
  try {
    dir = "dir" in options ? options.dir : cacheDir();
  } catch {
    dir = undefined; // no home directory to find a cache in: compile as without one
  }
  const prefix = `${path.basename(file)}-`;
  // V8 refuses an entry made under other V8 flags; node's flags are in the name so that starts with
  // different ones (a --max-old-space-size, a profiler) keep an entry each instead of replacing one.
  const flags = sha256(process.execArgv.join("\0")).toString("hex").slice(0, 8);
  const keep = `${prefix}${sha256(source).toString("hex").slice(0, 32)}-${process.version}-${process.arch}-`;
  const name = `${keep}${flags}.v8`;
  const cachedData = dir === undefined ? undefined : readEntry(path.join(dir, name));
  const script = new vm.Script(Module.wrap(source), {
    filename: file,
    ...(cachedData !== undefined ? { cachedData } : {}),
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  const report = options.onCache ?? (() => {});
  const state =
    dir === undefined ? "off" : cachedData === undefined ? "absent" : script.cachedDataRejected ? "rejected" : "used";
  report(state);
  if (state === "absent" || state === "rejected") {
    let written = false;
    const write = () => {
      if (written) return;
      written = true;
      process.off("exit", write);
      try {
        if (writeEntry(dir, name, prefix, keep, script.createCachedData())) report("written");
      } catch {
        // As above: no cache, no harm.
      }
    };
    setTimeout(write, options.writeAfterMs ?? WRITE_AFTER_MS).unref();
    process.once("exit", write);
  }
  const module = { exports: {}, id: file, filename: file, loaded: false };
  script
    .runInThisContext()
    .call(module.exports, module.exports, Module.createRequire(file), module, file, path.dirname(file));
  module.loaded = true;
  return module.exports;
}

module.exports = { loadCompiled, cacheDir };
