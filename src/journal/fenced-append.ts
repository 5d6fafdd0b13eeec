// Mint a fence and append under it (optionally with the checkpoint bound to the last record) as one
// durable commit where the backend can, else as the separate calls in the same order. Invariant: the
// records are written under the fence minted for them, and a checkpoint row is never stored before
// the record it binds; callers store any blob the checkpoint or a SUSPEND names before calling.
import { ErrorCode, HostError } from "../errors/index.js";
import type { Event } from "../gen/agentsessions/v1/common_pb.js";
import type { FencedAppend, FencedAppendOptions, Journal } from "./types.js";

export async function appendUnderNewFence(
  journal: Journal,
  session: string,
  expectedLastSeq: number,
  events: readonly Event[],
  opts: FencedAppendOptions = {},
): Promise<FencedAppend> {
  if (events.length === 0)
    throw new HostError(ErrorCode.InvalidArgument, "appendUnderNewFence needs at least one event");
  if (journal.appendUnderNewFence) return journal.appendUnderNewFence(session, expectedLastSeq, events, opts);
  const fence = await journal.newFence(session);
  const records = await journal.appendBatch(session, expectedLastSeq, fence, events);
  const last = records.at(-1);
  if (opts.checkpointDigest !== undefined && last !== undefined) {
    await journal.putCheckpoint({
      session,
      seq: last.seq,
      contentHash: last.contentHash,
      digest: opts.checkpointDigest,
      createdAtMs: Date.now(),
    });
  }
  return { fence, records };
}
