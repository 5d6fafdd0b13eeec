// A large, realistic actor state for the snapshot figures: transcripts (strings), embeddings and
// buffers (typed arrays), an index (Map) and shared references. Invariant: the state's v8-serialized
// size is within a few percent of the requested size, and it holds only what the codec accepts.
import { fillActorState } from "../../harnesses/fixtures/big-state.js";

export class BenchActor {
  transcript: string[] = [];
  embeddings: Float32Array[] = [];
  blobs: Uint8Array[] = [];
  index = new Map<string, { turn: number; text: string }>();
  turns = 0;
}

/** Fills an actor to about `bytes` of serialized state (see fillActorState). */
export function bigActor(bytes: number): BenchActor {
  const actor = new BenchActor();
  fillActorState(actor, bytes);
  actor.turns = actor.transcript.length;
  return actor;
}
