// N echo turns of one kind — through serve + a spawned echo node ("real") or the contract floor
// (bench/lib/contract-turn-shape.ts, "floor") — after 20 warm-up turns, marked on stderr (MARK-START /
// MARK-END) so an `strace -f` of the run can be cut to the measured turns; with PROF=FILE, a V8 CPU
// profile (100 µs sampling) of exactly the measured turns is written to FILE; a preload that fills
// globalThis.__counts while globalThis.__on is set gets its counts printed per turn. Observes only.
// Run: [PROF=FILE] npx tsx bench/profile/turn-one.ts real|floor [turns]
import { openJournal } from "../../src/journal/index.js";
import { textMessage } from "../../src/model/text.js";
import { startContractTurnShape } from "../lib/contract-turn-shape.js";
import { openServedEcho } from "../lib/served-echo.js";
import { scratchDir } from "../lib/tmp.js";
import { Session } from "node:inspector/promises";
import { writeFileSync } from "node:fs";
const prof = process.env.PROF ? new Session() : undefined;
if (prof) {
  prof.connect();
  await prof.post("Profiler.enable");
  await prof.post("Profiler.setSamplingInterval", { interval: 100 });
}
const mark = async (what: string) => {
  console.error(what);
  const g = globalThis as { __on?: boolean; __counts?: Map<string, number> };
  if (what === "MARK-START") g.__on = true;
  else if (g.__counts) {
    g.__on = false;
    for (const [k, v] of [...g.__counts].sort((a, b) => b[1] - a[1])) console.error((v / n).toFixed(2), k);
  }
  if (!prof) return;
  if (what === "MARK-START") await prof.post("Profiler.start");
  else writeFileSync(process.env.PROF!, JSON.stringify((await prof.post("Profiler.stop")).profile));
};
const which = process.argv[2] ?? "real";
const n = Number(process.argv[3] ?? 50);
const dir = scratchDir("turn-one");
if (which === "real") {
  const served = await openServedEcho(dir, await openJournal(dir.file("journal.db")), 600_000);
  const client = served.client;
  const session = await served.newSession();
  for (let i = 0; i < 20 + n; i++) {
    if (i === 20) await mark("MARK-START");
    for await (const u of client.exec({ session, inputs: [textMessage("user", `hello ${i}`)] })) void u;
  }
  await mark("MARK-END");
  await served.close();
} else {
  const cj = await openJournal(dir.file("contract.db"));
  const contract = await startContractTurnShape(
    `unix://${dir.file("c.sock")}`,
    dir.file("cn.sock"),
    cj,
    "sess-contract",
  );
  for (let i = 0; i < 20 + n; i++) {
    if (i === 20) await mark("MARK-START");
    await contract.turn(`hello ${i}`);
  }
  await mark("MARK-END");
  await contract.close();
  await cj.close();
}
dir.dispose();
