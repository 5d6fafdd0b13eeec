// `serve` ready (issue 41): from spawning `harnesshost serve` to its first gRPC Health answer SERVING,
// against spawning `node -e 0` to its exit, alternating, as a user starts it (the compiled bin).
// Invariant: it reports, it never judges. Prints the medians and `serve_ready_ms` (the serve median).
// Usage: npm run build && npx tsx bench/serve-ready.ts [--runs N] [--bin PATH]
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import * as grpc from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import { protoPath as healthProtoPath } from "grpc-health-check";
import { median } from "./lib/stats.js";

const { values } = parseArgs({ options: { runs: { type: "string", default: "7" }, bin: { type: "string" } } });
const RUNS = Number(values.runs);
const BIN = resolve(values.bin ?? join(import.meta.dirname, "../bin/harnesshost.js"));

function nodeE0(): Promise<number> {
  const t0 = performance.now();
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, ["-e", "0"], { stdio: "ignore" });
    child.on("exit", (code) => (code === 0 ? res(performance.now() - t0) : rej(new Error(`node -e 0 exited ${code}`))));
  });
}

async function serveReady(): Promise<{ listeningMs: number; healthMs: number }> {
  const dir = mkdtempSync(join(tmpdir(), "hh-serve-ready-"));
  const t0 = performance.now();
  const child = spawn(
    process.execPath,
    [BIN, "serve", "--data", dir, "--addr", "127.0.0.1:0", "--registry-addr", "off", "--http-addr", "off"],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  try {
    const addr = await new Promise<string>((res, rej) => {
      // The ready line goes to stdout; the logs (stderr) are read too, so a full pipe cannot stall serve.
      for (const input of [child.stdout!, child.stderr!])
        createInterface({ input }).on("line", (l) => {
          const m = /listening addr=(\S+)/.exec(l);
          if (m?.[1]) res(m[1]);
        });
      child.on("exit", (code) => rej(new Error(`serve exited ${code} before listening`)));
    });
    const listeningMs = performance.now() - t0;
    const client = new Health(addr, grpc.credentials.createInsecure());
    await new Promise<void>((res, rej) =>
      client.check({ service: "" }, (err, reply) =>
        err ? rej(err) : reply?.status === "SERVING" ? res() : rej(new Error(`health ${reply?.status}`)),
      ),
    );
    const healthMs = performance.now() - t0;
    client.close();
    return { listeningMs, healthMs };
  } finally {
    child.kill("SIGTERM");
    await new Promise((res) => child.once("exit", res));
    rmSync(dir, { recursive: true, force: true });
  }
}

type Check = (req: object, cb: (err: grpc.ServiceError | null, res?: { status?: string }) => void) => void;
type HealthCtor = new (addr: string, creds: grpc.ChannelCredentials) => grpc.Client & { check: Check };
const Health = (
  grpc.loadPackageDefinition(loadSync(healthProtoPath, { keepCase: true, enums: String })) as unknown as {
    grpc: { health: { v1: { Health: HealthCtor } } };
  }
).grpc.health.v1.Health;

await serveReady(); // warm the page cache
const serve: number[] = [];
const listening: number[] = [];
const base: number[] = [];
for (let i = 0; i < RUNS; i++) {
  const s = await serveReady();
  serve.push(s.healthMs);
  listening.push(s.listeningMs);
  base.push(await nodeE0());
}
const r = (x: number) => Math.round(x * 10) / 10;
console.log(`bin ${BIN}, ${RUNS} runs`);
console.log(
  `serve_ready_ms ${r(median(serve))} (listening line ${r(median(listening))}; runs ${serve.map(r).join(" / ")})`,
);
console.log(`node -e 0 ${r(median(base))} ms; ratio ${r(median(serve) / median(base))}`);
