// Same-process A/B of the echo turn on PostgreSQL: another checkout's host (OLD_TREE, e.g. made with
// `git worktree add /tmp/wt-old HEAD~1` and node_modules linked) against this tree's, both against a
// SQLite host of this tree, in interleaved blocks of turns — so a loaded machine slows all three
// alike and the ratios stay comparable. Prints p50s and pg_turn_ratio for both trees:
// `npx tsx bench/profile/pg-turn-ab.ts OLD_TREE [blocks=20] [turnsPerBlock=10]`.
// Invariant: every schema and directory it makes is removed in `finally`.
import { resolve } from "node:path";
import { type EchoHost, openEchoHost } from "../lib/echo-host.js";
import { promptText } from "../lib/echo-turns.js";
import { dropPgSchema, freshPgSchema, pgJournalUrl } from "../lib/pg.js";
import { median } from "../lib/stats.js";
import { scratchDir } from "../lib/tmp.js";

const oldTree = process.argv[2];
if (oldTree === undefined) throw new Error("usage: pg-turn-ab.ts OLD_TREE [blocks] [turnsPerBlock]");
const blocks = Number(process.argv[3] ?? 20);
const perBlock = Number(process.argv[4] ?? 10);
const openOld = ((await import(resolve(oldTree, "bench/lib/echo-host.ts"))) as { openEchoHost: typeof openEchoHost })
  .openEchoHost;

const schemas = [freshPgSchema("abold"), freshPgSchema("abnew")] as const;
const dir = scratchDir("pg-turn-ab");
const hosts = new Map<string, EchoHost>();
const latencies = new Map<string, number[]>();
try {
  hosts.set("old pg", await openOld(dir.file("old"), "local", pgJournalUrl(schemas[0])));
  hosts.set("new pg", await openEchoHost(dir.file("new"), "local", pgJournalUrl(schemas[1])));
  hosts.set("sqlite", await openEchoHost(dir.file("sqlite")));
  const sessions = new Map<string, string>();
  for (const [name, host] of hosts) {
    const session = await host.newSession();
    sessions.set(name, session);
    for (let i = 0; i < 5; i++) await host.turn(session, promptText(i, 80));
    latencies.set(name, []);
  }
  let n = 0;
  for (let b = 0; b < blocks; b++) {
    const names = [...hosts.keys()];
    for (const name of b % 2 === 0 ? names : names.reverse()) {
      const host = hosts.get(name)!;
      for (let i = 0; i < perBlock; i++) {
        const t0 = performance.now();
        await host.turn(sessions.get(name)!, promptText(100 + n++, 80));
        latencies.get(name)!.push(performance.now() - t0);
      }
    }
  }
  const p50 = (name: string) => median(latencies.get(name)!);
  const [o, w, s] = [p50("old pg"), p50("new pg"), p50("sqlite")];
  process.stdout.write(
    `p50 ms: old pg ${o.toFixed(2)}, new pg ${w.toFixed(2)}, sqlite ${s.toFixed(2)}; pg_turn_ratio old ${(o / s).toFixed(2)}, new ${(w / s).toFixed(2)}; new/old ${(w / o).toFixed(2)}\n`,
  );
} finally {
  for (const host of hosts.values()) await host.close().catch(() => undefined);
  for (const s of schemas) await dropPgSchema(s);
  dir.dispose();
}
