// `serve` ready, measured as a user starts it: from spawning the compiled bin's `serve` (SQLite in a
// fresh directory or in one an earlier start made — a restart — registry and HTTP listeners off) to
// its first gRPC Health answer SERVING, and the baseline of spawning `node -e 0` to its exit.
// Invariant: every serve it starts is stopped, and a directory it made is removed, whatever happens.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import * as grpc from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import { protoPath as healthProtoPath } from "grpc-health-check";

/** The package's bin (runs dist/, built by `npm run build`). */
export const PACKAGE_BIN = resolve(import.meta.dirname, "../../bin/harnesshost.js");

/** ms from spawning `node -e 0` to its exit. */
export function nodeE0Ms(): Promise<number> {
  const t0 = performance.now();
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, ["-e", "0"], { stdio: "ignore" });
    child.on("exit", (code) => (code === 0 ? res(performance.now() - t0) : rej(new Error(`node -e 0 exited ${code}`))));
  });
}

type Check = (req: object, cb: (err: grpc.ServiceError | null, res?: { status?: string }) => void) => void;
type HealthCtor = new (addr: string, creds: grpc.ChannelCredentials) => grpc.Client & { check: Check };
let health: HealthCtor | undefined;
function healthClient(): HealthCtor {
  health ??= (
    grpc.loadPackageDefinition(loadSync(healthProtoPath, { keepCase: true, enums: String })) as unknown as {
      grpc: { health: { v1: { Health: HealthCtor } } };
    }
  ).grpc.health.v1.Health;
  return health;
}

/** Resolves once `addr`'s gRPC Health answers SERVING for the whole server; rejects on anything else. */
export async function healthServing(addr: string): Promise<void> {
  const client = new (healthClient())(addr, grpc.credentials.createInsecure());
  try {
    await new Promise<void>((res, rej) =>
      client.check({ service: "" }, (err, reply) =>
        err ? rej(err) : reply?.status === "SERVING" ? res() : rej(new Error(`health ${reply?.status}`)),
      ),
    );
  } finally {
    client.close();
  }
}

/** Stops a serve this module's caller started (SIGTERM), once it has exited; nothing if it already has. */
export async function stopServe(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((res) => child.once("exit", res));
  child.kill("SIGTERM");
  await exited;
}

/**
 * One start of `bin serve`: ms to its listening line and to its first Health SERVING. On `dataDir` (a
 * restart: the caller's directory, kept) or, without one, on a fresh directory made and removed here.
 */
export async function serveReadyMs(
  bin: string = PACKAGE_BIN,
  dataDir?: string,
): Promise<{ listeningMs: number; healthMs: number }> {
  const dir = dataDir ?? mkdtempSync(join(tmpdir(), "hh-serve-ready-"));
  const t0 = performance.now();
  const child = spawn(
    process.execPath,
    [bin, "serve", "--data", dir, "--addr", "127.0.0.1:0", "--registry-addr", "off", "--http-addr", "off"],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  try {
    const addr = await new Promise<string>((res, rej) => {
      // The ready line goes to stdout; the logs (stderr) are read too, so a full pipe cannot stall serve.
      for (const input of [child.stdout, child.stderr])
        createInterface({ input }).on("line", (l) => {
          const m = /listening addr=(\S+)/.exec(l);
          if (m?.[1]) res(m[1]);
        });
      child.on("exit", (code) => rej(new Error(`serve exited ${code} before listening`)));
    });
    const listeningMs = performance.now() - t0;
    await healthServing(addr);
    return { listeningMs, healthMs: performance.now() - t0 };
  } finally {
    await stopServe(child);
    if (dataDir === undefined) rmSync(dir, { recursive: true, force: true });
  }
}
