// The every-turn crash window: a host or node dies after a turn's END is committed (and acknowledged)
// but before that turn's checkpoint row is written. The actor must continue from its last completed
// turn — restored from the previous checkpoint and the one turn replayed against its recorded effects
// — never be refused as lost, reset to zero, or re-apply the turn twice.
import { join } from "node:path";
import { openSqlite } from "../../src/journal/sqlite/driver.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Host } from "../../src/host/host.js";
import {
  closeAll,
  expectChainVerifies,
  headSeq,
  openTestHost,
  pidExists,
  spawnedRuntimeOf,
  turn,
  turns,
  until,
} from "../tiers/helpers.js";

let host: Host;

beforeAll(async () => {
  host = await openTestHost({ nodeIdleMs: 0 });
});
afterAll(closeAll);

/** Deletes the session's newest checkpoint row, as if the host died before writing it. */
function dropNewestCheckpoint(session: string): number {
  const db = openSqlite(join(host.config.dataDir, "journal.db"));
  try {
    const row = db
      .prepare<[string], { seq: number }>("SELECT seq FROM checkpoints WHERE session = ? ORDER BY seq DESC LIMIT 1")
      .get(session);
    if (!row) throw new Error("no checkpoint to drop");
    db.prepare("DELETE FROM checkpoints WHERE session = ? AND seq = ?").run(session, row.seq);
    return row.seq;
  } finally {
    db.close();
  }
}

async function killCounterNode(): Promise<void> {
  const node = spawnedRuntimeOf(host, "counter").currentNode;
  expect(node, "a node serves counter").toBeDefined();
  node!.kill();
  await until(`node ${node!.pid} is dead`, () => !pidExists(node!.pid) && node!.child.signalCode !== null);
}

describe("every-turn checkpoint crash window", () => {
  it("END committed, checkpoint lost, node killed: the next Exec continues at N+1", async () => {
    const session = (await host.createSession({ harness: "counter" })).uid;
    expect(await turns(host, session, 3)).toEqual(["1", "2", "3"]);
    const dropped = dropNewestCheckpoint(session);
    expect(dropped).toBe(await headSeq(host, session));
    expect((await host.journal.latestCheckpoint(session))!.seq).toBeLessThan(dropped);

    await killCounterNode();
    expect(await turn(host, session)).toEqual(["4"]);
    expect(await turn(host, session)).toEqual(["5"]);
    await expectChainVerifies(host, session);
  });

  it("the first turn's checkpoint lost: the next Exec rebuilds from a fresh actor and continues at 2", async () => {
    const session = (await host.createSession({ harness: "counter" })).uid;
    expect(await turns(host, session, 1)).toEqual(["1"]);
    dropNewestCheckpoint(session);
    expect(await host.journal.latestCheckpoint(session)).toBeUndefined();
    await killCounterNode();
    expect(await turn(host, session)).toEqual(["2"]);
    await expectChainVerifies(host, session);
  });

  it("the rebuild re-checkpoints at the last END, so a second loss restores directly", async () => {
    const session = (await host.createSession({ harness: "counter" })).uid;
    expect(await turns(host, session, 2)).toEqual(["1", "2"]);
    dropNewestCheckpoint(session);
    await killCounterNode();
    expect(await turn(host, session)).toEqual(["3"]);
    expect((await host.journal.latestCheckpoint(session))!.seq).toBe(await headSeq(host, session));
    await killCounterNode();
    expect(await turn(host, session)).toEqual(["4"]);
    await expectChainVerifies(host, session);
  });
});
