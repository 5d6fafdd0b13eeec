// concurrent_turns_per_s and concurrent_errors: 100 sessions each running echo turns at the same time
// through one in-process host (placement, local echo, one SQLite journal). Invariant: every turn
// either answers its own echo or is counted as an error; the figure never hides a failure.
import { openEchoHost } from "../lib/echo-host.js";
import { promptText } from "../lib/echo-turns.js";
import { round } from "../lib/stats.js";
import { scratchDir } from "../lib/tmp.js";
import type { Figure, FigureResult, RunOptions } from "../lib/types.js";

export const concurrentTurns: Figure = {
  key: "concurrent_turns_per_s",
  extraKeys: ["concurrent_errors"],
  title: "100 concurrent sessions doing echo turns (in-process host)",
  async run(opts: RunOptions): Promise<FigureResult> {
    const sessions = opts.quick ? 10 : 100;
    const turnsEach = opts.quick ? 2 : 10;
    const dir = scratchDir("concurrent");
    const host = await openEchoHost(dir.path);
    try {
      const uids = await Promise.all(Array.from({ length: sessions }, () => host.newSession()));
      let errors = 0;
      let firstError = "";
      const t0 = performance.now();
      await Promise.all(
        uids.map(async (uid, s) => {
          for (let i = 0; i < turnsEach; i++) {
            const text = promptText(s * 1000 + i);
            try {
              const r = await host.turn(uid, text);
              if (r.outputs[0] !== `echo:${text}`) throw new Error(`wrong answer ${JSON.stringify(r.outputs[0])}`);
            } catch (err) {
              errors++;
              firstError ||= err instanceof Error ? err.message : String(err);
            }
          }
        }),
      );
      const seconds = (performance.now() - t0) / 1000;
      const total = sessions * turnsEach;
      const perS = (total - errors) / seconds;
      return {
        status: "ok",
        value: round(perS),
        unit: "turns/s",
        details: {
          sessions,
          turnsEach,
          seconds: round(seconds),
          path: `in-process Host placer.exec on the ${host.runtime} runtime (no client gRPC hop)`,
        },
        also: {
          concurrent_errors: {
            value: errors,
            unit: "errors",
            target: { op: "<=", value: 0 },
            details: firstError ? { firstError } : {},
          },
        },
      };
    } finally {
      await host.close();
      dir.dispose();
    }
  },
};
