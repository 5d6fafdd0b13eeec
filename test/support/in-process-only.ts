// Set-up file of the unit project (test/projects.ts): a unit test runs inside its own process.
// Invariant: in a unit file, starting a child process (spawn, fork, exec*, *Sync) or opening a
// connection to PostgreSQL throws an error naming the file and what it started, so a file that needs
// a process or a database is moved to the integration project instead of slowing the inner loop.
import { createRequire, syncBuiltinESMExports } from "node:module";

const require = createRequire(import.meta.url);
const PG_PORT = Number(new URL(process.env.HARNESSHOST_TEST_PG_URL ?? "postgres://127.0.0.1:5432").port || 5432);
const FLAG = Symbol.for("harnesshost.test.inProcessOnly");

function refuse(what: string): never {
  const file = (globalThis as { __vitest_worker__?: { filepath?: string } }).__vitest_worker__?.filepath ?? "?";
  throw new Error(
    `${file} is a unit test and started ${what}: unit tests run in process (test/projects.ts); move the file to integration`,
  );
}

const g = globalThis as Record<symbol, unknown>;
if (g[FLAG] !== true) {
  g[FLAG] = true;
  const cp = require("node:child_process") as typeof import("node:child_process");
  // Every asynchronous spawn (spawn, fork, exec, execFile) goes through this internal method.
  (cp.ChildProcess.prototype as unknown as { spawn: (opts: { file?: string }) => never }).spawn = (opts) =>
    refuse(`a child process (${opts.file ?? "?"})`);
  const writable = cp as unknown as Record<string, unknown>;
  for (const name of ["spawnSync", "execSync", "execFileSync"])
    writable[name] = (cmd: unknown) => refuse(`a child process (${name} ${String(cmd)})`);
  const net = require("node:net") as typeof import("node:net");
  const connect = net.Socket.prototype.connect as (...args: unknown[]) => unknown;
  net.Socket.prototype.connect = function connectUnlessPostgres(this: unknown, ...args: unknown[]) {
    const first = args[0];
    const target = Array.isArray(first) ? first[0] : first;
    const port = typeof target === "object" && target !== null ? (target as { port?: unknown }).port : target;
    if (Number(port) === PG_PORT) refuse(`a PostgreSQL connection (port ${PG_PORT})`);
    return connect.apply(this, args);
  } as typeof net.Socket.prototype.connect;
  syncBuiltinESMExports();
}
