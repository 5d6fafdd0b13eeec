// What `harnesshost serve` loads before it is ready (issue 41, docs/performance.md "serve_ready_ms"):
// the compiled bin in a child process, every module it loads traced (test/fixtures/module-trace.mjs), an
// output file of the bundle read as the modules it holds (test/support/bundle-meta.ts).
// Invariants: with the default flags (ports moved to 0) serve loads neither the PostgreSQL driver, the
// OpenTelemetry SDK, the vm runtime (nor its image manifest), @grpc/reflection nor any .proto parser; with --http-addr off it
// does not load the HTTP console either, nor @connectrpc/connect, nor — before it is ready —
// prom-client's process metrics and the @opentelemetry/api they pull in; and the hand-registered gRPC health answers Check, Watch and
// List as grpc-health-check did.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import * as grpc from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import { protoPath as healthProtoPath } from "grpc-health-check";
import { afterAll, describe, expect, it } from "vitest";
import { unbundled } from "../support/bundle-meta.js";

const BIN = resolve(import.meta.dirname, "../../bin/harnesshost.js");
const TRACE = resolve(import.meta.dirname, "../fixtures/module-trace.mjs");
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Served {
  readonly addr: string;
  readonly loaded: readonly string[];
  stop(): Promise<void>;
}

/** Starts serve with the trace preloaded; resolves at its listening line with what it loaded by then. */
async function serve(...flags: string[]): Promise<Served> {
  const dir = mkdtempSync(join(tmpdir(), "hh-serve-deferred-"));
  dirs.push(dir);
  const child = spawn(
    process.execPath,
    [
      "--import",
      TRACE,
      BIN,
      "serve",
      "--data",
      dir,
      "--addr",
      "127.0.0.1:0",
      "--registry-addr",
      "127.0.0.1:0",
      ...flags,
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  const loaded: string[] = [];
  let out = "";
  const addr = await new Promise<string>((res, rej) => {
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
      for (;;) {
        const nl = out.indexOf("\n");
        if (nl < 0) break;
        const line = out.slice(0, nl);
        out = out.slice(nl + 1);
        if (line.startsWith("LOADED ")) loaded.push(line.slice(7));
        const m = /harnesshost listening addr=(\S+)/.exec(line);
        if (m?.[1]) res(m[1]);
      }
    });
    child.once("exit", (code) => rej(new Error(`serve exited ${code} before listening: ${out}`)));
  });
  const snapshot = unbundled(loaded);
  return {
    addr,
    loaded: snapshot,
    async stop() {
      const exited = new Promise((res) => child.once("exit", res));
      child.kill("SIGTERM");
      await exited;
    },
  };
}

const loadedPackage = (loaded: readonly string[], pkg: string): string[] =>
  loaded.filter((p) => p.includes(`/node_modules/${pkg}/`));
const loadedDist = (loaded: readonly string[], file: string): string[] =>
  loaded.filter((p) => p.endsWith(`/dist/src/${file}`));

type Reply = { status?: string; statuses?: Record<string, { status?: string }> };
type Unary = (req: object, cb: (err: grpc.ServiceError | null, res?: Reply) => void) => void;
type HealthClient = grpc.Client & { check: Unary; list: Unary; watch(req: object): grpc.ClientReadableStream<Reply> };
const HealthCtor = (
  grpc.loadPackageDefinition(loadSync(healthProtoPath, { keepCase: true, enums: String })) as unknown as {
    grpc: { health: { v1: { Health: new (addr: string, creds: grpc.ChannelCredentials) => HealthClient } } };
  }
).grpc.health.v1.Health;

function call(fn: Unary, req: object): Promise<Reply> {
  return new Promise((res, rej) => fn(req, (err, reply) => (err ? rej(err) : res(reply ?? {}))));
}

describe("serve start", () => {
  it("serveWithDefaultFlagsLoadsNoPostgresOtelSdkVmReflectionOrProtoParser", async () => {
    const s = await serve("--http-addr", "127.0.0.1:0");
    try {
      // The trace saw the start: the host's own modules are in it.
      expect(loadedDist(s.loaded, "server/server.js")).toHaveLength(1);
      for (const pkg of [
        "pg",
        "@opentelemetry/sdk-trace-node",
        "@grpc/reflection",
        "@grpc/proto-loader",
        "protobufjs",
        "grpc-health-check",
      ])
        expect(loadedPackage(s.loaded, pkg), pkg).toEqual([]);
      expect(loadedDist(s.loaded, "runtime/vm.js")).toEqual([]);
      expect(loadedDist(s.loaded, "vm/qemu.js")).toEqual([]);
      // Recognising an image needs its file name only, not the manifest's schemas.
      expect(loadedDist(s.loaded, "vm/image-manifest.js")).toEqual([]);
      // The console listener is on by default, so its modules are loaded.
      expect(loadedDist(s.loaded, "http/server.js")).toHaveLength(1);
    } finally {
      await s.stop();
    }
  }, 60_000);

  it("serveWithHttpOffLoadsNoHttpConsoleConnectOtelApiOrProcessMetricsBeforeReady", async () => {
    const s = await serve("--http-addr", "off");
    try {
      expect(loadedDist(s.loaded, "server/server.js")).toHaveLength(1);
      expect(loadedDist(s.loaded, "http/server.js")).toEqual([]);
      expect(loadedDist(s.loaded, "http/assets.js")).toEqual([]);
      expect(loadedPackage(s.loaded, "@connectrpc/connect-node")).toEqual([]);
      expect(loadedPackage(s.loaded, "@connectrpc/connect")).toEqual([]);
      expect(loadedPackage(s.loaded, "@opentelemetry/api")).toEqual([]);
      // The metrics registry is there (serve counts RPCs from the start); the process families are not yet.
      expect(s.loaded.some((p) => p.endsWith("/prom-client/lib/registry.js"))).toBe(true);
      expect(s.loaded.filter((p) => p.endsWith("/prom-client/lib/defaultMetrics.js"))).toEqual([]);
    } finally {
      await s.stop();
    }
  }, 60_000);

  it("handRegisteredHealthAnswersCheckWatchAndListAsGrpcHealthCheckDid", async () => {
    const s = await serve("--http-addr", "off");
    const client = new HealthCtor(s.addr, grpc.credentials.createInsecure());
    try {
      expect(await call(client.check.bind(client), { service: "" })).toEqual({ status: "SERVING" });
      expect(await call(client.check.bind(client), { service: "agentsessions.v1.Sessions" })).toEqual({
        status: "SERVING",
      });
      await expect(call(client.check.bind(client), { service: "no.such.Service" })).rejects.toMatchObject({
        code: grpc.status.NOT_FOUND,
        details: "Health status unknown for service no.such.Service",
      });
      const listed = await call(client.list.bind(client), {});
      expect(listed.statuses).toEqual({
        "": { status: "SERVING" },
        "agentsessions.v1.Sessions": { status: "SERVING" },
      });
      for (const [service, status] of [
        ["", "SERVING"],
        ["no.such.Service", "SERVICE_UNKNOWN"],
      ] as const) {
        const stream = client.watch({ service });
        const first = await new Promise<Reply>((res, rej) => {
          stream.once("data", res);
          stream.once("error", rej);
        });
        expect(first).toEqual({ status });
        stream.cancel();
        stream.on("error", () => {});
      }
    } finally {
      client.close();
      await s.stop();
    }
  }, 60_000);
});
