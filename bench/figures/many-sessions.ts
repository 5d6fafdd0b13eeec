// Ten thousand sessions in one host (issue 23 item 3), four keys from one in-process Host:
// - host_rss_per_live_session_bytes: RSS growth (after GC) per echo session that ran one turn and stays
//   resident (its local-runtime instance, its cached history and records, placement state); heap +
//   external per session is in details;
// - host_rss_per_suspended_session_bytes: the same per counter session (spawned runtime: the actor
//   lives in the host-spawned node) that ran one turn and was suspended; the node's own RSS is in details;
// - turn_10k_resident_p50_ratio / turn_10k_resident_p99_ratio: p50 and p99 of an echo turn on the host
//   holding all those sessions (each turn on a random resident live session) over the same on a second
//   host in this process holding 10 sessions, turns alternating between the two hosts.
// Both hosts keep their data on tmpfs when the machine has one: the figure measures what residency
// costs, not the disk (each of the 20,000 sessions' creation and turn would otherwise pay fsyncs).
// Invariant: every session is checked to answer correctly, so a cold boot or a lost actor shows as an
// error, not as a fast turn.
import { readFileSync } from "node:fs";
import { Host } from "../../src/host/index.js";
import { textMessage } from "../../src/model/text.js";
import { SpawnedRuntime } from "../../src/runtime/spawned.js";
import { collector, settle } from "../lib/heap.js";
import { promptText } from "../lib/echo-turns.js";
import { median, percentile, round, sampleOf } from "../lib/stats.js";
import { scratchDir, type ScratchDir } from "../lib/tmp.js";
import type { Figure, FigureResult, RunOptions } from "../lib/types.js";

const signal = new AbortController().signal;

async function openHost(dir: ScratchDir): Promise<Host> {
  return Host.open({ dataDir: dir.path, journal: dir.file("journal.db"), nodeIdleMs: 600_000 });
}

async function echoTurn(host: Host, session: string, i: number): Promise<number> {
  const text = promptText(i);
  const t0 = performance.now();
  const r = await host.placer.exec({ session, inputs: [textMessage("user", text)], signal });
  const ms = performance.now() - t0;
  if (r.outputs[0] !== `echo:${text}`) throw new Error(`echo turn answered ${JSON.stringify(r.outputs[0])}`);
  return ms;
}

/** Runs `fn(i)` for i in 0..n-1, `width` at a time. */
async function pool(n: number, width: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < n) await fn(next++);
  };
  await Promise.all(Array.from({ length: Math.min(width, n) }, worker));
}

/** Resident set of a process by pid, in bytes (Linux); NaN elsewhere. */
function rssOfPid(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m?.[1] ? Number(m[1]) * 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

export const manySessions: Figure = {
  key: "turn_10k_resident_p50_ratio",
  extraKeys: ["turn_10k_resident_p99_ratio", "host_rss_per_live_session_bytes", "host_rss_per_suspended_session_bytes"],
  title: "echo turn with 10,000 sessions resident vs 10; host RSS per live / suspended session",
  timeoutMs: { quick: 120_000, full: 1_800_000 },
  async run(opts: RunOptions): Promise<FigureResult> {
    const n = opts.quick ? 100 : 10_000;
    const few = 10;
    const reps = opts.quick ? 20 : 400;
    const warmup = opts.quick ? 4 : 40;
    const width = 8;
    const gc = collector();
    const bigDir = scratchDir("many", "memory");
    const smallDir = scratchDir("few", "memory");
    const big = await openHost(bigDir);
    const small = await openHost(smallDir);
    try {
      // Warm both harnesses' code paths (and start the counter's node) before the first reading.
      const warmEcho = (await big.createSession({ harness: "echo" })).uid;
      await echoTurn(big, warmEcho, 0);
      const warmCounter = (await big.createSession({ harness: "counter" })).uid;
      await big.placer.exec({ session: warmCounter, inputs: [textMessage("user", "tick")], signal });
      await big.placer.suspend(warmCounter, signal);

      const r0 = settle(gc);
      const live: string[] = [];
      await pool(n, width, async (i) => {
        const uid = (await big.createSession({ harness: "echo" })).uid;
        await echoTurn(big, uid, i);
        live.push(uid);
      });
      const r1 = settle(gc);
      await pool(n, width, async () => {
        const uid = (await big.createSession({ harness: "counter" })).uid;
        const r = await big.placer.exec({ session: uid, inputs: [textMessage("user", "tick")], signal });
        if (r.outputs[0] !== "1") throw new Error(`counter answered ${JSON.stringify(r.outputs[0])}`);
        await big.placer.suspend(uid, signal);
      });
      const r2 = settle(gc);
      const counterRuntime = big.registry.get("counter")?.runtime;
      const nodeRss = rssOfPid(counterRuntime instanceof SpawnedRuntime ? counterRuntime.currentNode?.pid : undefined);

      const smallSessions: string[] = [];
      for (let i = 0; i < few; i++) {
        const uid = (await small.createSession({ harness: "echo" })).uid;
        await echoTurn(small, uid, i);
        smallSessions.push(uid);
      }
      const bigMs: number[] = [];
      const smallMs: number[] = [];
      for (let i = 0; i < warmup + reps; i++) {
        const pick = live[Math.floor(Math.random() * live.length)] as string;
        const pickSmall = smallSessions[i % few] as string;
        const text = n + i;
        let b: number;
        let s: number;
        if (i % 2 === 0) {
          b = await echoTurn(big, pick, text);
          s = await echoTurn(small, pickSmall, text);
        } else {
          s = await echoTurn(small, pickSmall, text);
          b = await echoTurn(big, pick, text);
        }
        if (i >= warmup) {
          bigMs.push(b);
          smallMs.push(s);
        }
      }
      const p50 = median(bigMs) / median(smallMs);
      const p99 = percentile(bigMs, 99) / percentile(smallMs, 99);
      return {
        status: "ok",
        value: round(p50),
        unit: "×",
        measured: sampleOf(bigMs.map(round), "ms", true),
        baseline: {
          ...sampleOf(smallMs.map(round), "ms", true),
          what: `echo turn on a host with ${few} sessions`,
        },
        ratio: round(p50),
        target: { op: "<=", value: 1.5 },
        details: {
          residentLive: n,
          residentSuspended: n,
          path: "in-process Host.placer.exec, echo on the local runtime, data on tmpfs",
        },
        also: {
          turn_10k_resident_p99_ratio: { value: round(p99), unit: "×", target: { op: "<=", value: 1.5 } },
          host_rss_per_live_session_bytes: {
            value: Math.round((r1.rss - r0.rss) / n),
            unit: "bytes",
            target: { op: "<=", value: 50 * 1024 },
            details: {
              sessions: n,
              heapBytesPerSession: Math.round((r1.heap - r0.heap) / n),
              hostRssMib: round(r1.rss / 2 ** 20),
            },
          },
          host_rss_per_suspended_session_bytes: {
            value: Math.round((r2.rss - r1.rss) / n),
            unit: "bytes",
            details: {
              sessions: n,
              heapBytesPerSession: Math.round((r2.heap - r1.heap) / n),
              counterNodeRssMib: round(nodeRss / 2 ** 20),
            },
          },
        },
      };
    } finally {
      await big.close();
      await small.close();
      bigDir.dispose();
      smallDir.dispose();
    }
  },
};
