// A focused workload for the CPU profiler: replays one 10,000-event echo session (as replay_ratio
// measures it) `reps` times after writing it once on tmpfs. Run:
// node --import tsx --cpu-prof --cpu-prof-dir /tmp/prof-replay bench/profile/replay.ts [reps]
// then: npx tsx bench/profile/summarize.ts /tmp/prof-replay/<file>.0.001.cpuprofile 40 --after <ms printed>
import { execTurn, replaySession, textMessage } from "../../src/controller/index.js";
import { SqliteJournal } from "../../src/journal/sqlite/journal.js";
import { echoModel } from "../../src/model/index.js";
import { echoBinding } from "../figures/replay.js";
import { promptText } from "../lib/echo-turns.js";
import { scratchDir } from "../lib/tmp.js";
import { created } from "../../test/journal/sessions.js";

const reps = Number(process.argv[2] ?? 30);
const dir = scratchDir("profile-replay", "memory");
const journal = SqliteJournal.open(dir.file("journal.db"));
const session = "sess-replay000000000000000000";
const binding = echoBinding();
const signal = new AbortController().signal;
try {
  await created(journal, session);
  const fence = await journal.newFence(session);
  for (let i = 0; i < 2000; i++) {
    await execTurn(
      { journal, model: echoModel },
      { session, binding, fence, inputs: [textMessage("user", promptText(i))], history: [], signal },
    );
  }
  process.stdout.write(`written at ${performance.now().toFixed(0)} ms since start\n`);
  const t0 = performance.now();
  for (let i = 0; i < reps; i++) await replaySession({ journal }, { session, binding, signal });
  process.stdout.write(
    `${reps} replays in ${(performance.now() - t0).toFixed(0)} ms (${((performance.now() - t0) / reps).toFixed(1)} ms each)\n`,
  );
} finally {
  await journal.close();
  dir.dispose();
}
