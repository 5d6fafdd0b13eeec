// Wall-clock spans of big-state suspend + resume cycles at SIZE bytes (the memory-tier figure's set-up:
// spawned runtime, warm node, on-suspend checkpoints, one turn between cycles, not timed): methods on
// the path are wrapped with timers and the print shows the median per cycle of each, in ms. Observes
// only; changes no behaviour. Run: npx tsx bench/profile/memory-trace.ts [bytes=1048576] [cycles=40]
// (add --cpu-prof for the host and HARNESSHOST_NODE_CPU_PROF_DIR=DIR for the node).
import { fileURLToPath } from "node:url";
import { Host } from "../../src/host/index.js";
import { openJournal } from "../../src/journal/index.js";
import { textMessage } from "../../src/model/text.js";
import { ActorsClient } from "../../src/node/actors-client.js";
import { ActorRecovery } from "../../src/placement/actor-recovery.js";
import { PlacementState } from "../../src/placement/placement-state.js";
import { Placer } from "../../src/placement/placer.js";
import { SpawnedRuntime } from "../../src/runtime/spawned.js";
import { FsSnapshotStore } from "../../src/snapshot/store.js";
import { Spans } from "../lib/spans.js";
import { traceSuspendCycles } from "../lib/suspend-cycles.js";
import { newTally, timed } from "../lib/timed.js";
import { scratchDir } from "../lib/tmp.js";

const bytes = Number(process.argv[2] ?? 1 << 20);
const cycles = Number(process.argv[3] ?? 40);
const harness = fileURLToPath(new URL("../../harnesses/fixtures/big-state.ts", import.meta.url));
const spans = new Spans();
spans.wrap(Placer.prototype, ["suspend", "resume"], "placer");
spans.wrap(PlacementState.prototype, ["hold", "session", "resolveHarness", "commitLifecycle"], "placer");
spans.wrap(ActorRecovery.prototype, ["incarnate", "headCheckpoint", "requireLiveActor"], "placer");
spans.wrap(SpawnedRuntime.prototype, ["restore", "snapshot", "stop", "status", "create"], "spawned");
spans.wrap(
  ActorsClient.prototype,
  ["restore", "snapshotWithTrailer", "drop", ...("restoreFile" in ActorsClient.prototype ? ["restoreFile"] : [])],
  "actors",
);
spans.wrap(FsSnapshotStore.prototype, ["get", "put"], "blobs");

const dir = scratchDir("memtrace");
const tally = newTally();
const journal = timed(await openJournal(dir.file("journal.db")), tally);
const host = await Host.open(
  {
    dataDir: dir.path,
    nodeIdleMs: 60_000,
    limits: { snapshotBytes: 1024 * 1024 * 1024, snapshotMs: 600_000 },
    harnesses: [{ name: "big", runtime: "spawned", target: harness, checkpointPolicy: "on-suspend" }],
  },
  { journal },
);
const signal = new AbortController().signal;
try {
  const session = (await host.createSession({ harness: "big" })).uid;
  await host.placer.exec({ session, inputs: [textMessage("user", `fill ${bytes}`)], signal });
  await traceSuspendCycles({
    host,
    session,
    signal,
    spans,
    tally,
    cycles,
    // a turn changes the state (count), so the next suspend stores a new blob
    between: () => host.placer.exec({ session, inputs: [textMessage("user", "tick")], signal }),
  });
  spans.print();
} finally {
  await host.close();
  dir.dispose();
}
