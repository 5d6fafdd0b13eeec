// What authentication and authorization cost an echo turn in CPU time (docs/performance.md,
// "Authorization cost"): the setting of the authz_turn_ratio figure (one host; a server without
// credentials and one whose operator is scoped to one project), turns alternating one by one, each
// timed by the process's CPU time (user + system, every thread: client, server, journal). Invariant: it
// reports, it never judges. Turn order alternates pair by pair; work a turn leaves running past its end
// is charged to the next turn, of the other side, which can only shrink a difference. `--aa` serves
// both sides without credentials: the same comparison's noise floor.
// Usage: npx tsx bench/authz-cpu.ts [--turns 600] [--aa]   (run it from each tree to compare trees)
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { Host } from "../src/host/index.js";
import { served } from "./figures/obs-overhead.js";
import { median } from "./lib/stats.js";
import { scratchDir } from "./lib/tmp.js";

const { values } = parseArgs({ options: { turns: { type: "string", default: "600" }, aa: { type: "boolean" } } });
const TURNS = Number(values.turns);
const WARMUP = 30;
const TOKEN = "bench-operator-token-0123456789";

/** Mean of the middle 80 %. */
function trimmedMean(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const cut = Math.floor(s.length * 0.1);
  const mid = s.slice(cut, s.length - cut);
  return mid.reduce((a, b) => a + b, 0) / mid.length;
}

const dir = scratchDir("authz-cpu");
const tokenFile = dir.file("tokens");
const digest = createHash("sha256").update(TOKEN).digest("hex");
writeFileSync(tokenFile, `sha256:${digest} principal=bench roles=operator projects=team-a\n`);
const host = await Host.open({ dataDir: dir.file("data"), nodeIdleMs: 60_000 }, { metrics: false });
try {
  const open = await served(host, dir, "open", { harness: "echo", project: "team-a" });
  const subject = values.aa
    ? await served(host, dir, "open2", { harness: "echo", project: "team-a" })
    : await served(host, dir, "authed", { harness: "echo", project: "team-a", tokenFile, token: TOKEN });
  const cpu = { base: [] as number[], subject: [] as number[] };
  const wall = { base: [] as number[], subject: [] as number[] };
  const one = async (side: "base" | "subject", i: number): Promise<void> => {
    const c0 = process.cpuUsage();
    const ms = await (side === "base" ? open : subject).turn(i);
    const c = process.cpuUsage(c0);
    if (i < WARMUP) return;
    cpu[side].push(c.user + c.system);
    wall[side].push(ms);
  };
  for (let i = 0; i < WARMUP + TURNS; i++) {
    const order: ("base" | "subject")[] = i % 2 === 0 ? ["base", "subject"] : ["subject", "base"];
    for (const side of order) await one(side, i);
  }
  await open.close();
  await subject.close();
  const r3 = (x: number): number => Math.round(x * 1000) / 1000;
  console.log(
    JSON.stringify({
      subject: values.aa ? "a second server without credentials (--aa)" : "project-scoped operator",
      turns: TURNS,
      cpu_median_us: { base: median(cpu.base), subject: median(cpu.subject) },
      cpu_median_ratio: r3(median(cpu.subject) / median(cpu.base)),
      cpu_trimmed_mean_ratio: r3(trimmedMean(cpu.subject) / trimmedMean(cpu.base)),
      wall_median_ms: { base: r3(median(wall.base)), subject: r3(median(wall.subject)) },
      wall_median_ratio: r3(median(wall.subject) / median(wall.base)),
    }),
  );
} finally {
  await host.close();
  dir.dispose();
}
