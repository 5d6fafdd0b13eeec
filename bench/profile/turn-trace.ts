// Wall-clock spans of echo turns through serve + a spawned echo node (the turn_latency_ratio set-up):
// prototype methods on the Exec path are wrapped with timers, so the print shows where a turn's
// milliseconds go (median per turn, in ms). Observes only; changes no behaviour.
// Run: npx tsx bench/profile/turn-trace.ts [turns]
import { EventKind } from "../../src/gen/agentsessions/v1/common_pb.js";
import { openJournal } from "../../src/journal/index.js";
import { textMessage } from "../../src/model/text.js";
import { ActorRecovery } from "../../src/placement/actor-recovery.js";
import { Placer } from "../../src/placement/placer.js";
import { PlacementState } from "../../src/placement/placement-state.js";
import { TurnCheckpoints } from "../../src/placement/turn-checkpoints.js";
import { ChainCheck } from "../../src/placement/chain-check.js";
import { HistoryCache } from "../../src/placement/history-cache.js";
import { RemoteHarness } from "../../src/node/remote-harness.js";
import { openServedEcho } from "../lib/served-echo.js";
import { newTally, timed } from "../lib/timed.js";
import { Spans } from "../lib/spans.js";
import { scratchDir } from "../lib/tmp.js";

const turns = Number(process.argv[2] ?? 200);
const spans = new Spans();
spans.wrap(Placer.prototype, ["exec"], "placer");
spans.wrap(PlacementState.prototype, ["hold", "session", "resolveHarness", "turnFence"], "placer");
spans.wrap(ActorRecovery.prototype, ["incarnate"], "placer");
spans.wrap(TurnCheckpoints.prototype, ["afterTurn"], "checkpoint");
spans.wrap(ChainCheck.prototype, ["ensure"], "chain");
spans.wrap(HistoryCache.prototype, ["get"], "history");
spans.wrap(RemoteHarness.prototype, ["run", "dispatch"], "remote");

const dir = scratchDir("turn-trace");
const tally = newTally();
const journal = timed(await openJournal(dir.file("journal.db")), tally);
const served = await openServedEcho(dir, journal, 60_000);
const client = served.client;
try {
  let session = "";
  for (let i = 0; i < turns + 20; i++) {
    // A fresh session every 70 turns, as turn_latency_ratio measures (history length matters).
    if (i % 70 === 0) session = await served.newSession();
    spans.begin();
    tally.reset();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    let first = 0;
    let ended = false;
    for await (const u of client.exec({ session, inputs: [textMessage("user", `hello ${i}`)] })) {
      if (first === 0) first = performance.now() - t0;
      if (u.update.case === "record" && u.update.value.event?.kind === EventKind.EVENT_END) ended = true;
    }
    if (!ended) throw new Error("no END");
    spans.add("client.total", performance.now() - t0);
    const cpu = process.cpuUsage(cpu0);
    spans.add("host.cpu.user", cpu.user / 1000);
    spans.add("host.cpu.system", cpu.system / 1000);
    spans.add("client.firstFrame", first);
    for (const [m, v] of tally.byMethod) spans.add(`journal.${m} x${v.calls}`, v.ms);
    spans.end(i >= 20);
  }
  spans.print();
} finally {
  await served.close();
  dir.dispose();
}
