// Builds a long echo session fast: whole echo turns appended through the journal's own appendBatch
// (hash chaining, fencing and the head row exactly as a live host writes them) in large transactions,
// not one turn at a time. Invariant: the result is a session a live host accepts and verifies — every
// record chained from genesis under one fence, every turn complete (EXECUTION_START … END) unless
// `events` is not a multiple of five, and each turn's events generated fresh (distinct execution ids).
import { compactionMessage } from "../../src/projection/compaction.js";
import { ev, textMessage } from "../../src/controller/events.js";
import { newExecutionId } from "../../src/controller/ids.js";
import type { Journal } from "../../src/journal/types.js";
import { echoEventStream } from "./echo-turns.js";

/** Events per appendBatch: one transaction and one fsync each (1,000 echo turns, ~0.9 MB). */
export const BUILD_CHUNK_EVENTS = 5_000;

/** Appends `events` echo-turn events to a new session of `journal` (which must exist, empty); returns its head seq. */
export async function buildLongSession(journal: Journal, uid: string, events: number): Promise<number> {
  const fence = await journal.newFence(uid);
  let seq = 0;
  let turn = 0;
  while (seq < events) {
    const n = Math.min(BUILD_CHUNK_EVENTS, events - seq);
    const chunk = echoEventStream(n, turn);
    turn += Math.ceil(n / 5);
    const records = await journal.appendBatch(uid, seq, fence, chunk);
    seq = records.at(-1)?.seq ?? seq;
  }
  return seq;
}

/**
 * Appends one echo-shaped turn whose OUTPUT is a compaction record of 1..head-`keep` (docs/protocol.md
 * §16), so a stateless turn after it receives only the last `keep` events plus that turn as history.
 * Returns the new head seq.
 */
export async function appendCompactionTurn(journal: Journal, uid: string, keep = 5): Promise<number> {
  const head = (await journal.head(uid)).seq;
  const id = newExecutionId();
  const summary = compactionMessage({
    summary: "s",
    fromSeq: 1,
    throughSeq: head - keep,
    inputHash: "",
    model: "echo",
  });
  const records = await journal.appendBatch(uid, head, await journal.newFence(uid), [
    ev.executionStart(id, {
      inputCount: 1,
      harness: "echo",
      harnessVersion: "1",
      config: new Uint8Array(),
      resumeFromSeq: 0,
    }),
    ev.input(id, textMessage("user", "compact")),
    ev.output(id, summary),
    ev.end(id),
  ]);
  return records.at(-1)?.seq ?? head;
}
