// Where a first touch from a verified position goes (first_touch_1m_ms, bench/figures/first-touch.ts):
// builds an N-event echo session with a compaction turn and one turn through a host (which stores the
// position), then times the parts of a fresh host's first touch on fresh instances — reading the stored
// position, its digest, decoding its projection, verifying the tail — and the whole first turn.
// Usage: npx tsx bench/profile/first-touch.ts [events=200000] [dir]
import { verifiedPositionDigest } from "../../src/journal/verified-position.js";
import { decodeProjection } from "../../src/projection/codec.js";
import { openJournal } from "../../src/journal/index.js";
import { openEchoHost } from "../lib/echo-host.js";
import { appendCompactionTurn, buildLongSession } from "../lib/long-build.js";
import { scratchDir } from "../lib/tmp.js";

const events = Number(process.argv[2] ?? 200_000);
const dir = scratchDir("profile-first-touch");
const db = dir.file("journal.db");
const time = async <T>(what: string, f: () => Promise<T> | T): Promise<T> => {
  const t0 = performance.now();
  const out = await f();
  console.log(`${what}: ${(performance.now() - t0).toFixed(1)} ms`);
  return out;
};
try {
  const builder = await openEchoHost(dir.path, "local", db);
  const uid = await builder.newSession();
  await time("build", async () => {
    await buildLongSession(builder.journal, uid, events);
    await appendCompactionTurn(builder.journal, uid);
    await builder.turn(uid, "grow");
  });
  await builder.close();
  const journal = await openJournal(db);
  const row = await time("read position", () => journal.verifiedPosition(uid));
  if (!row) throw new Error("no position stored");
  console.log(`position at seq ${row.seq}, projection ${row.projection.byteLength} bytes`);
  await time("digest", () => verifiedPositionDigest(uid, row.seq, row.hash, row.projection));
  await time("decode", () => decodeProjection(row.projection));
  await time("read tail", () => journal.readRange(uid, row.seq));
  await journal.close();
  for (let i = 0; i < 3; i++) {
    const host = await time("Host.open", () => openEchoHost(dir.path, "local", db));
    await time("first turn", () => host.turn(uid, `t${i}`));
    await time("second turn", () => host.turn(uid, `u${i}`));
    await host.close();
  }
} finally {
  dir.dispose();
}
