// Where the wire turn's time goes (wire_turn_ratio's set-up: the built-in echo, SQLite journal, an
// in-process server on 127.0.0.1, harnesshost/client). Prints, per turn, the wall-clock p50 and the
// process CPU (user + system) of the client-observed turn (`result()` only, and iterated) and of the same
// turn in process, in blocks of alternating kind; CPU per turn is the steadier guide on a shared machine.
// Invariant: it reports, never judges.
// Usage: npx tsx bench/profile/wire-turn.ts [turns per kind]
import { connect } from "../../src/client/index.js";
import { Host } from "../../src/host/index.js";
import { openJournal } from "../../src/journal/index.js";
import { textMessage } from "../../src/model/text.js";
import { startServer } from "../../src/server/index.js";
import { promptText } from "../lib/echo-turns.js";
import { median, round } from "../lib/stats.js";
import { scratchDir } from "../lib/tmp.js";

const SILENT = { debug() {}, info() {}, warn() {}, error() {} };
const turns = Number(process.argv[2] ?? 200);
const BLOCK = 20;
const dir = scratchDir("wire-profile");
const host = await Host.open({ dataDir: dir.path }, { journal: await openJournal(dir.file("journal.db")) });
const server = await startServer(host, { addr: "127.0.0.1:0", registryAddr: "off", logger: SILENT });
const client = connect({ address: server.addr });
const wireSession = (await client.sessions.create({ harness: "echo" })).metadata?.uid ?? "";
const localSession = (await host.createSession({ harness: "echo" })).uid;

const kinds = {
  "wire result()": async (i: number) => {
    await client.sessions.exec({ session: wireSession, input: promptText(i) }).result();
  },
  "wire iterated": async (i: number) => {
    for await (const _ of client.sessions.exec({ session: wireSession, input: promptText(i) }));
  },
  "in process": async (i: number) => {
    const signal = new AbortController().signal;
    await host.placer.exec({ session: localSession, inputs: [textMessage("user", promptText(i))], signal });
  },
};
const wall = new Map<string, number[]>();
const cpu = new Map<string, number>();
const sys = new Map<string, number>();
for (let i = 0; i < 2 * BLOCK; i++) for (const run of Object.values(kinds)) await run(i); // warm-up
for (let b = 0; b < turns / BLOCK; b++) {
  for (const [name, run] of Object.entries(kinds)) {
    const c0 = process.cpuUsage();
    for (let i = 0; i < BLOCK; i++) {
      const t0 = performance.now();
      await run(b * BLOCK + i);
      wall.set(name, [...(wall.get(name) ?? []), performance.now() - t0]);
    }
    const c = process.cpuUsage(c0);
    cpu.set(name, (cpu.get(name) ?? 0) + c.user + c.system);
    sys.set(name, (sys.get(name) ?? 0) + c.system);
  }
}
for (const name of Object.keys(kinds)) {
  const n = wall.get(name)?.length ?? 1;
  console.log(
    `${name.padEnd(16)} wall p50 ${round(median(wall.get(name) ?? []))} ms, cpu ${round((cpu.get(name) ?? 0) / n / 1000)} ms/turn (system ${round((sys.get(name) ?? 0) / n / 1000)})`,
  );
}
client.close();
await server.close(1000);
await host.close();
dir.dispose();
