// What storing and rebuilding a verified position's projection costs at N events (first_touch_1m_ms,
// docs/protocol.md §5.9): folds a lean log of N echo events (random hashes: the fold does not check
// them), then times encodeProjection, the position digest and decodeProjection, three times.
// Usage: npx tsx bench/profile/projection-codec.ts [events=1000000]
import { randomBytes } from "node:crypto";
import { SessionLog } from "../../src/projection/session-log.js";
import { decodeProjection, encodeProjection } from "../../src/projection/codec.js";
import { verifiedPositionDigest } from "../../src/journal/verified-position.js";
import { echoEventStream } from "../lib/echo-turns.js";
const events = Number(process.argv[2] ?? 1_000_000);
const log = SessionLog.lean();
let seq = 0;
let prev = "";
for (let done = 0; done < events; done += 5000) {
  for (const event of echoEventStream(5000, done / 5)) {
    seq++;
    const contentHash = randomBytes(32).toString("hex");
    log.apply({ seq, prevHash: prev, contentHash, fence: 1, event });
    prev = contentHash;
  }
}
for (let r = 0; r < 3; r++) {
  let t = performance.now();
  const bytes = encodeProjection(log)!;
  const enc = performance.now() - t;
  t = performance.now();
  verifiedPositionDigest("s", seq, prev, bytes);
  const dig = performance.now() - t;
  t = performance.now();
  const back = decodeProjection(bytes);
  const dec = performance.now() - t;
  console.log(
    `bytes ${bytes.length} encode ${enc.toFixed(1)} digest ${dig.toFixed(1)} decode ${dec.toFixed(1)} ms; head ${back.head.seq}`,
  );
}
