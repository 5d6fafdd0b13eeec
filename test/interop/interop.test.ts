// Interoperability with a gRPC implementation that is not grpc-js: a harness node, a registry client
// and a Sessions client written in Python (Debian's grpcio + protobuf, messages built at run time
// from `buf build` descriptors) drive an in-process host. The Python packages are a hard requirement
// here — `npm test` installs them first (scripts/ensure-test-deps.mjs) — so their absence fails the suite instead of skipping.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { HarnessSource } from "../../src/gen/agentsessions/v1/harness_registry_pb.js";
import { exportJsonl, openJournal } from "../../src/journal/index.js";
import { startFixture, type Fixture } from "../server/helpers.js";

const PYTHON = "/usr/bin/python3";
const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "../..");
const BUF = join(ROOT, "node_modules", ".bin", "buf");
/** The Python scripts import the shared `hhsdk` package (harnesses/python/hhsdk). */
const PY_ENV = { ...process.env, PYTHONPATH: join(ROOT, "harnesses", "python") };

type Resumability = "STATELESS_REPLAY" | "REQUIRES_MEMORY_SNAPSHOT";

interface Finished {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a program to its exit, keeping everything it printed. */
function run(cmd: string, args: readonly string[], cwd = ROOT): Promise<Finished> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cmd, args, { cwd, env: PY_ENV, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.once("error", reject);
    child.once("close", (code) => resolvePromise({ code, stdout, stderr }));
  });
}

const ErrorReport = z.object({
  error: z.object({ code: z.string(), details: z.string() }),
  session: z.string().optional(),
});
const Registered = z.object({ outcome: z.string(), uid: z.string(), spec_digest: z.string() });
const ExecSummary = z.object({
  session: z.string(),
  outputs: z.array(z.string()),
  kinds: z.array(z.string()),
  seqs: z.array(z.number().int()),
  replay_kinds: z.array(z.string()),
  last_seq: z.number().int(),
});

/** The one JSON line a Python client printed, checked against `schema`; fails with its stderr. */
function report<T>(done: Finished, schema: z.ZodType<T>): T {
  const line = done.stdout.trim().split("\n").pop() ?? "";
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw new Error(`client.py printed no JSON (exit ${String(done.code)}):\n${done.stdout}\n${done.stderr}`);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success)
    throw new Error(`unexpected client.py report (exit ${String(done.code)}): ${line}\n${done.stderr}`);
  return parsed.data;
}

let dir = "";
let descriptors = "";
let fx: Fixture | undefined;
const nodes: ChildProcess[] = [];

function client(...args: string[]): Promise<Finished> {
  return run(PYTHON, ["-B", join(HERE, "client.py"), descriptors, ...args]);
}

/** Starts echo_node.py on a unix socket in the temp dir; resolves with its address once it is listening. */
function startPythonNode(name: string, resumability: Resumability): Promise<string> {
  const socket = join(dir, `${name}.sock`);
  const child = spawn(PYTHON, ["-B", join(HERE, "echo_node.py"), descriptors, socket, "--resumability", resumability], {
    cwd: ROOT,
    env: PY_ENV,
    stdio: ["pipe", "pipe", "pipe"],
  });
  nodes.push(child);
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  return new Promise((resolvePromise, reject) => {
    child.once("error", reject);
    child.once("exit", (code) =>
      reject(new Error(`echo_node.py exited (${String(code)}) before it was ready:\n${stderr}`)),
    );
    createInterface({ input: child.stdout! }).on("line", (line) => {
      if (line.startsWith("ready ")) resolvePromise(line.slice("ready ".length));
    });
  });
}

async function stopNode(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  child.kill("SIGTERM");
  await exited;
}

beforeAll(async () => {
  const deps = await run(PYTHON, ["-c", "import grpc, google.protobuf"]);
  if (deps.code !== 0) {
    throw new Error(
      `${PYTHON} cannot import grpc and google.protobuf (Debian packages python3-grpcio, python3-protobuf); ` +
        `run \`node scripts/ensure-test-deps.mjs\` (npm test runs it first):\n${deps.stderr}`,
    );
  }
  dir = mkdtempSync(join(tmpdir(), "hh-interop-"));
  descriptors = join(dir, "agentsessions.binpb");
  const built = await run(BUF, ["build", "-o", descriptors]);
  expect(built.code, built.stderr).toBe(0);
  fx = await startFixture();
});

afterAll(async () => {
  await Promise.all(nodes.map(stopNode));
  await fx?.close();
  if (dir !== "") rmSync(dir, { recursive: true, force: true });
});

describe("a Python (grpcio) node and client against the host", () => {
  it("registers the Python node over HarnessRegistry and runs a turn through Sessions.Exec", async () => {
    const f = fx!;
    const address = await startPythonNode("pyecho", "STATELESS_REPLAY");

    const reg = await client("register", "--registry", f.server.registryAddr, "--name", "pyecho", "--address", address);
    expect(reg.code, reg.stdout + reg.stderr).toBe(0);
    const registered = report(reg, Registered);
    expect(registered.outcome).toBe("REGISTER_OUTCOME_CREATED");
    expect(registered.uid).toMatch(/^harness-[0-9a-f]{24}$/);
    expect(registered.spec_digest).toMatch(/^sha256:[0-9a-f]{64}$/);

    // The host sees the Python node's own Describe through the registration.
    const seen = await f.registry.getHarness({ name: "pyecho", observe: true });
    expect(seen.source).toBe(HarnessSource.REGISTERED);
    expect(seen.observeError).toBe("");
    expect(seen.observed?.id).toBe("pyecho");
    expect(seen.observed?.version).toBe("1");

    const ran = await client("exec", "--sessions", f.server.addr, "--harness", "pyecho", "--input", "hi");
    expect(ran.code, ran.stdout + ran.stderr).toBe(0);
    const summary = report(ran, ExecSummary);
    expect(summary.session).toMatch(/^sess-[0-9a-f]{24}$/);
    // The host's echo model answers the node's model call; then the node's own answer.
    expect(summary.outputs).toEqual(["echo:hi", "py:echo:hi"]);
    expect(summary.kinds).toEqual(["EXECUTION_START", "INPUT", "MODEL_CALL", "OUTPUT", "OUTPUT", "END"]);
    expect(summary.seqs).toEqual([1, 2, 3, 4, 5, 6]);
    expect(summary.replay_kinds).toEqual(summary.kinds);
    expect(summary.last_seq).toBe(6);

    // The chain the Python side drove verifies: through a second handle on the journal file, and by
    // the independent standard-library verifier over a JSONL export.
    const journal = await openJournal(join(f.dir, "journal.db"));
    try {
      expect(await journal.verify(summary.session)).toMatchObject({ ok: true, records: 6 });
      const lines: string[] = [];
      for await (const line of exportJsonl(journal, summary.session)) lines.push(line);
      const exported = join(dir, "pyecho.jsonl");
      writeFileSync(exported, `${lines.join("\n")}\n`);
      const verified = await run(PYTHON, ["-B", join(ROOT, "test", "verify_chain.py"), exported]);
      expect(verified.code, verified.stdout + verified.stderr).toBe(0);
      expect(verified.stdout.trim()).toBe("ok 6 records");
    } finally {
      await journal.close();
    }
  });

  it("refuses a memory-tier Python node at Exec with FAILED_PRECONDITION (it serves no Actors)", async () => {
    const f = fx!;
    const address = await startPythonNode("pyecho-mem", "REQUIRES_MEMORY_SNAPSHOT");
    const reg = await client(
      "register",
      "--registry",
      f.server.registryAddr,
      "--name",
      "pyecho-mem",
      "--address",
      address,
      "--resumability",
      "REQUIRES_MEMORY_SNAPSHOT",
    );
    expect(reg.code, reg.stdout + reg.stderr).toBe(0);
    expect(report(reg, Registered).outcome).toBe("REGISTER_OUTCOME_CREATED");

    const ran = await client("exec", "--sessions", f.server.addr, "--harness", "pyecho-mem", "--input", "hi");
    const refused = report(ran, ErrorReport);
    expect(ran.code).toBe(2);
    expect(refused.error.code).toBe("FAILED_PRECONDITION");
    expect(refused.error.details).toMatch(/REQUIRES_MEMORY_SNAPSHOT/);
    // Refused before anything was journaled.
    expect(refused.session).toMatch(/^sess-[0-9a-f]{24}$/);
    expect((await f.host.journal.head(refused.session ?? "")).seq).toBe(0);
  });
});
