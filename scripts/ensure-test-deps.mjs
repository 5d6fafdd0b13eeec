#!/usr/bin/env node
// Makes sure the system dependencies of the test suite exist before vitest runs: Python grpcio and
// protobuf for the system interpreter (the interop tests), pip, venv and mypy (the Python SDK's tests) and a PostgreSQL answering where the tests
// look for it (HARNESSHOST_TEST_PG_URL, default 127.0.0.1:5432). Idempotent: when everything is
// present it does nothing and prints nothing. Invariant: it exits 0 only when the suite's
// dependencies are there; anything missing that it cannot fix exits 1 with the command that fixes it
// (the PostgreSQL tests fail, never skip, without a server). The vm runtime's packages (QEMU, the
// Debian cloud kernel, busybox, zstd) are best effort: where they cannot be installed, the vm tests
// skip and print why (test/vm/vm-env.ts checks the same things). The console's browser tests need
// Debian's chromium-headless-shell (driven by playwright-core; no browser is ever downloaded): it is
// installed with apt-get when missing, and its absence without root is exit 1 with the command.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { connect } from "node:net";

const PYTHON = "/usr/bin/python3";
const PY_PACKAGES = ["python3-grpcio", "python3-protobuf"];
// The same default as test/journal/postgres-fixture.ts; only this default server is started locally.
const PG_DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/test";
const PG_URL = new URL(process.env.HARNESSHOST_TEST_PG_URL ?? PG_DEFAULT_URL);
const PG_HOST = PG_URL.hostname;
const PG_PORT = Number(PG_URL.port || 5432);
const PG_IS_DEFAULT = PG_HOST === "127.0.0.1" && PG_PORT === 5432;
const PG_START_DEADLINE_MS = 30_000;
/** The vm runtime's packages and how to tell each is present. */
const VM_PACKAGES = [
  ["qemu-system-x86", () => onPath("qemu-system-x86_64")],
  [
    "linux-image-cloud-amd64",
    () => existsSync("/boot") && readdirSync("/boot").some((n) => /^vmlinuz-.*-cloud-amd64$/.test(n)),
  ],
  ["busybox-static", () => existsSync("/bin/busybox") && run("/bin/busybox", ["true"]).ok],
  ["zstd", () => onPath("zstd")],
];

/** Runs a command quietly; its exit code and combined output. */
function run(cmd, args, env = process.env) {
  const r = spawnSync(cmd, args, { encoding: "utf8", env });
  return { ok: r.status === 0, output: `${r.stdout ?? ""}${r.stderr ?? ""}${r.error ? String(r.error) : ""}` };
}

function onPath(cmd) {
  return run("sh", ["-c", `command -v ${cmd}`]).ok;
}

function pythonGrpcPresent() {
  return existsSync(PYTHON) && run(PYTHON, ["-c", "import grpc, google.protobuf"]).ok;
}

function ensurePythonGrpc() {
  // openssl makes the TLS test's certificate; slim images can lack it.
  // The Python SDK's tests (test/python, test/docs/python.test.ts) install it with Debian's pip into a
  // venv and check it with Debian's mypy.
  const sdkTools = [
    ["python3-pip", () => run(PYTHON, ["-c", "import pip"]).ok],
    ["python3-venv", () => run(PYTHON, ["-c", "import ensurepip, venv"]).ok],
    ["mypy", () => onPath("mypy")],
  ];
  const packages = [
    ...(pythonGrpcPresent() ? [] : PY_PACKAGES),
    ...(onPath("openssl") ? [] : ["openssl"]),
    ...sdkTools.filter(([, present]) => !present()).map(([name]) => name),
  ];
  if (packages.length === 0) return;
  const isRoot = typeof process.getuid === "function" && process.getuid() === 0;
  if (!isRoot || !onPath("apt-get")) {
    console.error(
      `ensure-test-deps: missing system packages for the tests; install the Debian packages ${packages.join(" ")} ` +
        `(as root: apt-get update && apt-get install -y ${packages.join(" ")})`,
    );
    process.exit(1);
  }
  console.log(`ensure-test-deps: installing ${packages.join(" ")} with apt-get`);
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  for (const args of [
    ["update", "-qq"],
    ["install", "-y", "-qq", ...packages],
  ]) {
    const r = run("apt-get", args, env);
    if (!r.ok) {
      console.error(`ensure-test-deps: apt-get ${args.join(" ")} failed:\n${r.output}`);
      process.exit(1);
    }
  }
  if (!pythonGrpcPresent()) {
    console.error(
      `ensure-test-deps: ${PY_PACKAGES.join(" ")} installed, but ${PYTHON} still cannot import grpc and google.protobuf`,
    );
    process.exit(1);
  }
}

/** Where test/console/chromium.ts looks for the browser first. */
const CHROMIUM = "/usr/bin/chromium-headless-shell";

function ensureChromium() {
  if (existsSync(CHROMIUM) || onPath("chromium-headless-shell")) return;
  const isRoot = typeof process.getuid === "function" && process.getuid() === 0;
  if (!isRoot || !onPath("apt-get")) {
    console.error(
      "ensure-test-deps: the console's browser tests need Debian's chromium-headless-shell " +
        "(as root: apt-get update && apt-get install -y --no-install-recommends chromium-headless-shell)",
    );
    process.exit(1);
  }
  console.log("ensure-test-deps: installing chromium-headless-shell with apt-get (console browser tests)");
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  for (const args of [
    ["update", "-qq"],
    ["install", "-y", "-qq", "--no-install-recommends", "chromium-headless-shell"],
  ]) {
    const r = run("apt-get", args, env);
    if (!r.ok) {
      console.error(`ensure-test-deps: apt-get ${args.join(" ")} failed:\n${r.output}`);
      process.exit(1);
    }
  }
}

/** Best effort: the vm tests skip (printing why) where these cannot be installed. */
function ensureVmPackages() {
  const missing = VM_PACKAGES.filter(([, present]) => !present()).map(([name]) => name);
  if (missing.length === 0) return;
  const isRoot = typeof process.getuid === "function" && process.getuid() === 0;
  if (!isRoot || !onPath("apt-get")) {
    console.log(
      `ensure-test-deps: the vm runtime tests will skip: missing Debian packages ${missing.join(" ")} and no root apt-get to install them`,
    );
    return;
  }
  console.log(`ensure-test-deps: installing ${missing.join(" ")} with apt-get (vm runtime tests)`);
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  for (const args of [
    ["update", "-qq"],
    ["install", "-y", "-qq", "--no-install-recommends", ...missing],
  ]) {
    const r = run("apt-get", args, env);
    if (!r.ok) {
      console.log(`ensure-test-deps: the vm runtime tests will skip: apt-get ${args.join(" ")} failed:\n${r.output}`);
      return;
    }
  }
}

/** Resolves true when something accepts a TCP connection on the PostgreSQL port. */
function postgresAnswers(timeoutMs = 500) {
  return new Promise((resolve) => {
    const socket = connect({ host: PG_HOST, port: PG_PORT });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

/** Exits 1 with what is wrong and how to fix it: without a server the PostgreSQL tests fail. */
function postgresMissing(why) {
  const fix = PG_IS_DEFAULT
    ? "install and start it (as root: apt-get install -y postgresql && pg_ctlcluster --skip-systemctl-redirect <version> main start; " +
      "the tests connect as postgres with trust auth to the database test), or set HARNESSHOST_TEST_PG_URL to a server you have"
    : "start that server, or unset HARNESSHOST_TEST_PG_URL to use 127.0.0.1:5432";
  console.error(
    `ensure-test-deps: PostgreSQL is not answering on ${PG_HOST}:${PG_PORT} (${why}); the PostgreSQL tests would fail. Fix: ${fix}`,
  );
  process.exit(1);
}

async function ensurePostgres() {
  if (await postgresAnswers()) return;
  if (!PG_IS_DEFAULT)
    postgresMissing("HARNESSHOST_TEST_PG_URL names it; only the default local server is started here");
  if (!onPath("pg_ctlcluster") || !existsSync("/etc/postgresql")) postgresMissing("pg_ctlcluster is absent");
  const version = readdirSync("/etc/postgresql").sort()[0];
  if (version === undefined) postgresMissing("/etc/postgresql holds no cluster");
  console.log(`ensure-test-deps: starting PostgreSQL ${version}/main`);
  const r = run("pg_ctlcluster", ["--skip-systemctl-redirect", version, "main", "start"]);
  if (!r.ok && !(await postgresAnswers())) {
    console.error(`ensure-test-deps: pg_ctlcluster failed:\n${r.output}`);
    process.exit(1);
  }
  const deadline = Date.now() + PG_START_DEADLINE_MS;
  while (!(await postgresAnswers())) {
    if (Date.now() > deadline) {
      console.error(
        `ensure-test-deps: PostgreSQL did not answer on ${PG_HOST}:${PG_PORT} within ${PG_START_DEADLINE_MS / 1000} s`,
      );
      process.exit(1);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

ensurePythonGrpc();
ensureChromium();
ensureVmPackages();
await ensurePostgres();
