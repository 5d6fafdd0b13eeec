// Memory bounded by bytes (docs/operations.md, "Limits"): hundreds of large Execs (a new echo session each)
// against a real `harnesshost serve` leave its resident memory flat — the caches hold at most their
// byte budgets, whatever the number of sessions. The assertion is a memory budget, never a time.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Sessions } from "../../src/gen/agentsessions/v1/session_pb.js";
import { createClient } from "../../src/wire/index.js";
import { healthServing } from "../security/hostile-helpers.js";
import { drain, userInput, type SessionsClient } from "../server/helpers.js";
import { ServeProcess } from "./serve-process.js";

const MiB = 1024 * 1024;
/**
 * The caches' budgets for this host (each), and the growth the test allows over a warmed-up host: the
 * two caches (32 MiB) plus SQLite's page cache and V8's heap slack. The old count-bounded caches grew
 * ~257 MiB over the same 200 Execs.
 */
const CACHE_BUDGET = 16 * MiB;
const RSS_GROWTH_BUDGET = 128 * MiB;
const INPUT_BYTES = 512 * 1024;
const WARMUP = 40;
const REQUESTS = 240;

let dir = "";
let serve: ServeProcess | undefined;
let client: SessionsClient;

function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(m?.[1] ?? 0) * 1024;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "hh-mempressure-"));
  serve = await ServeProcess.start({
    args: [
      "--data",
      join(dir, "data"),
      "--addr",
      "127.0.0.1:0",
      "--registry-addr",
      "127.0.0.1:0",
      "--http-addr",
      "127.0.0.1:0",
      "--limit",
      `historyCacheBytes=${CACHE_BUDGET}`,
      "--limit",
      `recordCacheBytes=${CACHE_BUDGET}`,
      "--log-level",
      "warn",
    ],
  });
  client = createClient(Sessions, serve.addr);
}, 120_000);

afterAll(async () => {
  client?.close();
  await serve?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("memory pressure", () => {
  it("rssStaysFlatOverHundredsOfLargeExecs", async () => {
    const pid = serve?.pid ?? 0;
    const text = "m".repeat(INPUT_BYTES);
    const exec = async (): Promise<void> => {
      const { error } = await drain(client.exec({ inputs: [userInput(text)] }));
      expect(error).toBeUndefined();
    };
    for (let i = 0; i < WARMUP; i++) await exec();
    const warm = rssBytes(pid);
    let peak = warm;
    for (let i = WARMUP; i < REQUESTS; i++) {
      await exec();
      peak = Math.max(peak, rssBytes(pid));
    }
    const growth = peak - warm;
    console.info(
      `memory pressure: RSS ${Math.round(warm / MiB)} MiB after ${WARMUP} Execs, peak ${Math.round(peak / MiB)} MiB over ${REQUESTS}`,
    );
    // Old code kept every session's history and records (~2 × 512 KiB each): ~200 MiB over 200 Execs.
    expect(growth, `RSS ${Math.round(warm / MiB)} MiB after warm-up, peak ${Math.round(peak / MiB)} MiB`).toBeLessThan(
      RSS_GROWTH_BUDGET,
    );
    await healthServing(serve?.addr ?? "");
  }, 600_000);
});
