// agent_turn_ratio_10k: host CPU of one agent-kit turn on a session with 10,000 prior turns, over the
// same on a session with 10, with journaled compaction (docs/agents.md, docs/protocol.md §16); the
// details give host CPU and Start.history bytes per turn at 10, 1,000 and 10,000 prior turns, with and
// without compaction. Invariant: every session lives in one SQLite journal, its prior turns are the
// events a kit agent journals, and the measured turns alternate between sessions, so only the session
// length (and whether it compacts) differs.
import { textMessage } from "../../src/controller/events.js";
import { Host } from "../../src/host/index.js";
import { promptText } from "../lib/echo-turns.js";
import { seededTurns, startBytes } from "../lib/kit-agent.js";
import { median, round, sampleOf } from "../lib/stats.js";
import { scratchDir } from "../lib/tmp.js";
import type { Figure, FigureResult, RunOptions } from "../lib/types.js";

const MODULE = new URL("../lib/kit-agent.ts", import.meta.url).pathname;

interface Series {
  readonly turns: number;
  readonly compacting: boolean;
  readonly uid: string;
  readonly cpuMs: number[];
  readonly startBytes: number[];
}

export const agentTurn: Figure = {
  key: "agent_turn_ratio_10k",
  title: "agent-kit turn CPU at 10,000 prior turns vs at 10, with compaction",
  async run(opts: RunOptions): Promise<FigureResult> {
    const sizes = opts.quick ? [10, 100, 300] : [10, 1_000, 10_000];
    const warmup = opts.quick ? 2 : 5;
    const measuredTurns = opts.quick ? 6 : 40;
    const dir = scratchDir("agent-turn");
    const signal = new AbortController().signal;
    const host = await Host.open({
      dataDir: dir.path,
      harnesses: [
        { name: "kitc", runtime: "local", target: MODULE },
        { name: "kitp", runtime: "local", target: `${MODULE.replace(/\.ts$/, "-plain.ts")}` },
      ],
    });
    try {
      const series: Series[] = [];
      for (const compacting of [true, false])
        for (const turns of sizes) {
          const { uid } = await host.createSession({ harness: compacting ? "kitc" : "kitp" });
          const fence = await host.journal.newFence(uid);
          await host.journal.appendBatch(uid, 0, fence, seededTurns(turns, compacting));
          series.push({ turns, compacting, uid, cpuMs: [], startBytes: [] });
        }
      for (let i = 0; i < warmup + measuredTurns; i++) {
        const order = i % 2 === 0 ? series : [...series].reverse();
        for (const s of order) {
          const text = promptText(100_000 + i, 120);
          const cpu0 = process.cpuUsage();
          const result = await host.placer.exec({ session: s.uid, inputs: [textMessage("user", text)], signal });
          const cpu = process.cpuUsage(cpu0);
          if (result.outputs.at(-1) !== `echo:${text}`)
            throw new Error(`agent turn answered ${JSON.stringify(result.outputs.at(-1))}`);
          if (i >= warmup) {
            s.cpuMs.push((cpu.user + cpu.system) / 1000);
            s.startBytes.push(startBytes.at(-1) ?? 0);
          }
        }
      }
      const of = (turns: number, compacting: boolean) =>
        series.find((s) => s.turns === turns && s.compacting === compacting)!;
      const [small, , big] = sizes as [number, number, number];
      const withC = of(big, true);
      const baseC = of(small, true);
      const ratio = median(withC.cpuMs) / median(baseC.cpuMs);
      const details: Record<string, number | string> = {
        measuredTurnsEach: measuredTurns,
        warmupTurns: warmup,
        compactAfterMessages: 40,
      };
      for (const s of series) {
        const tag = `${s.compacting ? "compact" : "nocompact"}_${s.turns}`;
        details[`cpuMs_${tag}`] = round(median(s.cpuMs));
        details[`startBytes_${tag}`] = Math.round(median(s.startBytes));
      }
      details["ratioWithoutCompaction"] = round(median(of(big, false).cpuMs) / median(of(small, false).cpuMs));
      return {
        status: "ok",
        value: round(ratio),
        unit: "×",
        measured: sampleOf(withC.cpuMs.map(round), "ms CPU", true),
        baseline: {
          ...sampleOf(baseC.cpuMs.map(round), "ms CPU", true),
          what: `host CPU of a compacting agent turn at ${small} prior turns`,
        },
        ratio: round(ratio),
        target: { op: "<=", value: 1.5 },
        details,
      };
    } finally {
      await host.close();
      dir.dispose();
    }
  },
};
