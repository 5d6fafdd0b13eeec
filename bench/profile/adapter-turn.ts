// Profiles hosted turns of one framework adapter's example agent (bench/figures/adapters.ts's subject
// side) for `node --cpu-prof`: `npx tsx --cpu-prof --cpu-prof-dir DIR bench/profile/adapter-turn.ts
// ai-sdk|openai-agents [TURNS] [ram] [kit|uncompacted]` (kit: the same agent on the agent kit,
// bench/lib/kit-weather.ts; uncompacted: the example with compaction off, its conversation growing every turn).
// Invariant: read-only over a scratch data directory; prints the median hosted turn so a profile and a
// figure can be matched.
import "../lib/src-entry-points.js";
import { aiSdkModelProvider } from "../../src/adapters/ai-sdk/index.js";
import { textMessage } from "../../src/controller/events.js";
import { Host } from "../../src/host/index.js";
import { MemoryJournal } from "../../src/journal/index.js";
import { median, timeMs } from "../lib/stats.js";
import { scratchDir } from "../lib/tmp.js";

const which = process.argv[2] ?? "ai-sdk";
const turns = Number(process.argv[3] ?? 200);
const ram = process.argv.includes("ram");
const kit = process.argv.includes("kit");
const uncompacted = process.argv.includes("uncompacted");
const name = which === "ai-sdk" ? "ai-sdk-agent" : "openai-agents-agent";
const example = uncompacted ? `../lib/${name}-uncompacted.ts` : `../../docs/examples/${name}.ts`;
const file = new URL(kit ? `../lib/kit-weather-${which}.ts` : example, import.meta.url).pathname;
const aiSdk = await import("../../docs/examples/ai-sdk-agent.js");
const agents = await import("../../docs/examples/openai-agents-agent.js");
const provider = which === "ai-sdk" ? aiSdkModelProvider(aiSdk.mockModel()) : agents.mockModel();
const dir = scratchDir("adapter-profile");
const host = await Host.open(
  { dataDir: dir.path, harnesses: [{ name: "a", runtime: "local", target: file }] },
  { model: provider, ...(ram ? { journal: new MemoryJournal() } : {}) },
);
try {
  const { uid } = await host.createSession({ harness: "a" });
  const signal = new AbortController().signal;
  const ms: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < turns; i++) {
    const c0 = process.cpuUsage();
    ms.push(
      await timeMs(() =>
        host.placer.exec({ session: uid, inputs: [textMessage("user", `weather in City${i}?`)], signal }),
      ),
    );
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
  }
  const kinds = (await host.journal.readRange(uid)).slice(-12).map((r) => r.event.kind);
  const last = await host.placer.exec({ session: uid, inputs: [textMessage("user", "weather in Oslo?")], signal });
  process.stdout.write(`answer ${JSON.stringify(last.outputs.at(-1))}\n`);
  process.stdout.write(`${which}${kit ? " (kit)" : ""}: last records ${kinds.join(",")}\n`);
  process.stdout.write(
    `${which}${kit ? " (kit)" : ""}: median hosted turn ${median(ms.slice(10)).toFixed(2)} ms (CPU ${median(cpu.slice(10)).toFixed(2)} ms) over ${turns - 10}\n`,
  );
} finally {
  await host.close();
  dir.dispose();
}
