// Wall-clock spans of counter suspend + resume cycles (the suspend_resume_p50_ms set-up: spawned
// runtime, warm node, one turn between cycles, not timed): methods on the path are wrapped with timers
// and the print shows the median per cycle of each, in ms. Observes only; changes no behaviour.
// Run: npx tsx bench/profile/suspend-trace.ts [cycles]
import { Host } from "../../src/host/index.js";
import { openJournal } from "../../src/journal/index.js";
import { ActorsClient } from "../../src/node/actors-client.js";
import { ChainCheck } from "../../src/placement/chain-check.js";
import { ActorRecovery } from "../../src/placement/actor-recovery.js";
import { Placer } from "../../src/placement/placer.js";
import { PlacementState } from "../../src/placement/placement-state.js";
import { RecordCache } from "../../src/placement/record-cache.js";
import { SpawnedRuntime } from "../../src/runtime/spawned.js";
import { FsSnapshotStore } from "../../src/snapshot/store.js";
import { counterTurns } from "../lib/counter-turn.js";
import { newTally, timed } from "../lib/timed.js";
import { Spans } from "../lib/spans.js";
import { traceSuspendCycles } from "../lib/suspend-cycles.js";
import { scratchDir } from "../lib/tmp.js";

const cycles = Number(process.argv[2] ?? 100);
const spans = new Spans();
spans.wrap(Placer.prototype, ["suspend", "resume"], "placer");
spans.wrap(PlacementState.prototype, ["hold", "session", "resolveHarness", "commitLifecycle"], "placer");
spans.wrap(ActorRecovery.prototype, ["incarnate", "headCheckpoint", "requireLiveActor"], "placer");
spans.wrap(ChainCheck.prototype, ["ensure"], "chain");
spans.wrap(RecordCache.prototype, ["window"], "records");
spans.wrap(SpawnedRuntime.prototype, ["restore", "stop", "status", "create"], "spawned");
spans.wrap(ActorsClient.prototype, ["restore", "drop"], "actors");
spans.wrap(FsSnapshotStore.prototype, ["get", "put"], "blobs");

const dir = scratchDir("suspend-trace");
const tally = newTally();
const journal = timed(await openJournal(dir.file("journal.db")), tally);
const host = await Host.open({ dataDir: dir.path, nodeIdleMs: 60_000 }, { journal });
const signal = new AbortController().signal;
try {
  const session = (await host.createSession({ harness: "counter" })).uid;
  const turn = counterTurns(host, session, signal);
  await turn();
  await traceSuspendCycles({ host, session, signal, spans, tally, cycles, between: turn });
  spans.print();
} finally {
  await host.close();
  dir.dispose();
}
