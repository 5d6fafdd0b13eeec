// A large, realistic actor state for the snapshot figures: transcripts (strings), embeddings and
// buffers (typed arrays), an index (Map) and shared references. Invariant: the state's v8-serialized
// size is within a few percent of the requested size, and it holds only what the codec accepts.
export class BenchActor {
  transcript: string[] = [];
  embeddings: Float32Array[] = [];
  blobs: Uint8Array[] = [];
  index = new Map<string, { turn: number; text: string }>();
  turns = 0;
}

/** Fills an actor to about `bytes` of serialized state: ~40% strings, ~40% Float32Array, ~20% bytes. */
export function bigActor(bytes: number): BenchActor {
  const actor = new BenchActor();
  const line = "the quick brown fox jumps over the lazy dog; ".repeat(23); // ~1 KiB
  let strings = 0;
  for (let i = 0; strings < bytes * 0.4; i++) {
    const text = `${i}:${line}`;
    actor.transcript.push(text);
    if (i % 8 === 0) actor.index.set(`t${i}`, { turn: i, text }); // shared with transcript (one copy)
    strings += text.length;
  }
  for (let f = 0; f < bytes * 0.4; f += 4096 * 4) {
    const v = new Float32Array(4096);
    for (let k = 0; k < v.length; k++) v[k] = Math.sin(f + k);
    actor.embeddings.push(v);
  }
  for (let b = 0; b < bytes * 0.2; b += 65536) {
    const u = new Uint8Array(65536);
    for (let k = 0; k < u.length; k += 97) u[k] = k & 0xff;
    actor.blobs.push(u);
  }
  actor.turns = actor.transcript.length;
  return actor;
}
