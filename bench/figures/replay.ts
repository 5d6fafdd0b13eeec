// replay_ratio: replaySession of an echo session written live by the controller (execTurn against a
// SqliteJournal, the echo model, the echo harness), in events/s, against a raw read of the same rows
// (SELECT event … ORDER BY seq + fromBinary). Invariant: replay must serve every turn with zero model
// calls (replaySession refuses any model call as divergence) and the right outputs, or the figure
// crashes instead of reporting a number.
import Database from "better-sqlite3";
import { create, fromBinary } from "@bufbuild/protobuf";
import { EchoAgent } from "../../harnesses/echoagent/index.js";
import { execTurn, replaySession, textMessage, type HarnessBinding } from "../../src/controller/index.js";
import { EventSchema } from "../../src/gen/agentsessions/v1/common_pb.js";
import { HarnessDescriptorSchema, Resumability } from "../../src/gen/agentsessions/v1/harness_pb.js";
import { HEAD_ROW_SEQ } from "../../src/journal/sqlite/schema.js";
import { SqliteJournal } from "../../src/journal/sqlite/journal.js";
import { echoModel } from "../../src/model/index.js";
import type { ModelProvider } from "../../src/model/types.js";
import { promptText } from "../lib/echo-turns.js";
import { median, paired, round, sampleOf } from "../lib/stats.js";
import { scratchDir } from "../lib/tmp.js";
import type { Figure, FigureResult, RunOptions } from "../lib/types.js";
import { created } from "../../test/journal/sessions.js";

const EVENTS_PER_TURN = 5;

export function echoBinding(): HarnessBinding {
  const harness = new EchoAgent();
  const descriptor = create(HarnessDescriptorSchema, {
    id: "echo",
    version: "1",
    models: ["echo"],
    capabilities: { resumability: Resumability.STATELESS_REPLAY, forkSafe: true },
  });
  return { harness, name: "echo", descriptor };
}

/** Writes `turns` live echo turns through the controller. History is not needed: echo ignores it. */
async function writeSession(
  journal: SqliteJournal,
  session: string,
  turns: number,
  model: ModelProvider,
): Promise<void> {
  const binding = echoBinding();
  await created(journal, session);
  const fence = await journal.newFence(session);
  const signal = new AbortController().signal;
  for (let i = 0; i < turns; i++) {
    await execTurn(
      { journal, model },
      { session, binding, fence, inputs: [textMessage("user", promptText(i))], history: [], signal },
    );
  }
}

export const replay: Figure = {
  key: "replay_ratio",
  title: "replay (events/s, zero model calls) vs raw read + decode",
  async run(opts: RunOptions): Promise<FigureResult> {
    const turns = opts.quick ? 100 : 2000;
    const reps = opts.quick ? 2 : 11;
    // Both sides read the same rows from the page cache; the journal only needs to *exist*, so it is
    // built on tmpfs where available (2,000 live turns are 10,000 fsyncs otherwise).
    const dir = scratchDir("replay", "memory");
    const path = dir.file("journal.db");
    const journal = SqliteJournal.open(path);
    let raw: Database.Database | undefined;
    try {
      const session = "sess-replay000000000000000000";
      const w0 = performance.now();
      await writeSession(journal, session, turns, echoModel);
      const writeMs = performance.now() - w0;
      const events = turns * EVENTS_PER_TURN;
      raw = new Database(path, { readonly: true });
      // The session's records (its head row, schema 2, holds no event).
      const select = raw.prepare<[string], { event: Uint8Array }>(
        `SELECT event FROM events WHERE session = ? AND seq < ${HEAD_ROW_SEQ} ORDER BY seq`,
      );
      const binding = echoBinding();
      const signal = new AbortController().signal;
      const runs = await paired(
        reps,
        1,
        async () => {
          const t0 = performance.now();
          const result = await replaySession({ journal }, { session, binding, signal });
          const ms = performance.now() - t0;
          if (
            result.recordsRead !== events ||
            result.outputs.length !== turns ||
            result.outputs[turns - 1] !== `echo:${promptText(turns - 1)}`
          ) {
            throw new Error(
              `replay served ${result.outputs.length} outputs from ${result.recordsRead} records; expected ${turns} from ${events}`,
            );
          }
          return events / (ms / 1000);
        },
        async () => {
          const t0 = performance.now();
          let decoded = 0;
          for (const row of select.all(session)) {
            fromBinary(EventSchema, row.event);
            decoded++;
          }
          const ms = performance.now() - t0;
          if (decoded !== events) throw new Error(`raw read found ${decoded} rows, expected ${events}`);
          return events / (ms / 1000);
        },
      );
      const ratio = median(runs.ratios);
      return {
        status: "ok",
        value: round(ratio),
        unit: "×",
        measured: sampleOf(runs.subject.map(round), "events/s"),
        baseline: {
          ...sampleOf(runs.baseline.map(round), "events/s"),
          what: "SELECT event … ORDER BY seq + fromBinary(EventSchema)",
        },
        ratio: round(ratio),
        target: { op: ">=", value: 0.5 },
        details: {
          events,
          turns,
          reps,
          writeSeconds: round(writeMs / 1000),
          journalOn: dir.path.startsWith("/dev/shm") ? "tmpfs" : "disk",
        },
      };
    } finally {
      raw?.close();
      await journal.close();
      dir.dispose();
    }
  },
};
