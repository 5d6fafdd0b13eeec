// authz_turn_ratio: what authentication and authorization cost on an echo turn over gRPC (issue 42):
// one host, two servers on it — one with no credentials (the baseline: no auth, no scope), one with a
// token file whose operator principal is scoped to one project (so every call is authenticated, its
// permission looked up, the principal bound, and the session's project checked) — turns alternating
// between them. Reported: the median of three rounds' ratios (subject median / baseline median), and
// in `details` the process CPU time (user + system, every thread: client, server, journal) of each
// turn, subject against baseline — the comparison a loaded machine distorts least (work a turn leaves
// running past its end is charged to the next turn, of the other side, which can only shrink the gap).
// Invariant: both sides run the same host, harness, journal and client code; only the server's
// credentials differ.
import { writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { median, round, sampleOf } from "../lib/stats.js";
import { scratchDir } from "../lib/tmp.js";
import { served } from "./obs-overhead.js";
import type { Figure, FigureResult, RunOptions } from "../lib/types.js";

const TOKEN = "bench-operator-token-0123456789";

export const authzOverhead: Figure = {
  key: "authz_turn_ratio",
  title: "authorization cost: echo turn over gRPC as a project-scoped principal vs a host without credentials",
  async run(opts: RunOptions): Promise<FigureResult> {
    const { Host } = await import("../../src/host/index.js");
    const turns = opts.quick ? 4 : 60;
    const warmup = opts.quick ? 1 : 10;
    const dir = scratchDir("authz");
    const tokenFile = dir.file("tokens");
    const digest = createHash("sha256").update(TOKEN).digest("hex");
    writeFileSync(tokenFile, `sha256:${digest} principal=bench roles=operator projects=team-a\n`);
    const host = await Host.open({ dataDir: dir.file("data"), nodeIdleMs: 60_000 }, { metrics: false });
    const open = await served(host, dir, "open", { harness: "echo", project: "team-a" });
    const authed = await served(host, dir, "authed", { harness: "echo", project: "team-a", tokenFile, token: TOKEN });
    const ratios: number[] = [];
    const off: number[] = [];
    const on: number[] = [];
    const cpuOff: number[] = [];
    const cpuOn: number[] = [];
    /** One timed turn, and the process CPU time (µs) it took. */
    const timed = async (s: typeof open, i: number): Promise<{ ms: number; cpu: number }> => {
      const c0 = process.cpuUsage();
      const ms = await s.turn(i);
      const c = process.cpuUsage(c0);
      return { ms, cpu: c.user + c.system };
    };
    try {
      for (let round = 0; round < 3; round++) {
        const a: number[] = [];
        const b: number[] = [];
        for (let i = 0; i < warmup + turns; i++) {
          const first = i % 2 === 0;
          const x = first ? await timed(open, i) : await timed(authed, i);
          const y = first ? await timed(authed, i) : await timed(open, i);
          if (i < warmup) continue;
          const [base, subject] = first ? [x, y] : [y, x];
          a.push(base.ms);
          b.push(subject.ms);
          cpuOff.push(base.cpu);
          cpuOn.push(subject.cpu);
        }
        ratios.push(median(b) / median(a));
        off.push(...a);
        on.push(...b);
      }
    } finally {
      await open.close();
      await authed.close();
      await host.close();
      dir.dispose();
    }
    const ratio = median(ratios);
    return {
      status: "ok",
      value: round(ratio),
      unit: "×",
      measured: sampleOf(on.map(round), "ms"),
      baseline: { ...sampleOf(off.map(round), "ms"), what: "echo turn over gRPC on a server with no credentials" },
      ratio: round(ratio),
      target: { op: "<=", value: 1.05 },
      details: {
        rounds: ratios.map(round).join(" / "),
        cpu_subject_us: Math.round(median(cpuOn)),
        cpu_baseline_us: Math.round(median(cpuOff)),
        cpu_ratio: round(median(cpuOn) / median(cpuOff)),
      },
    };
  },
};
