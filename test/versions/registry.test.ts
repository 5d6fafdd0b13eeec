// Harness versions over real gRPC (docs/versioning.md): registering version 2 beside 1 at runtime,
// sessions pinned to 1 running on, ListVersions with pinned sessions, RetireVersion refused while
// sessions are pinned (listing them) unless forced, and the upgrade RPC — through harnesshost/client
// against in-process harness nodes on loopback, with the registry stored in SQLite and in PostgreSQL.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { connect, type HarnessHostClient } from "../../src/client/index.js";
import { serveHarness, type HarnessNode } from "../../src/node/index.js";
import { versioned } from "../fixtures/harnesses/versioned.js";
import { startFixture, type Fixture } from "../server/helpers.js";
import { dropSchemas, freshSchema, PG_URL } from "../journal/postgres-fixture.js";

let fx: Fixture | undefined;
let client: HarnessHostClient | undefined;
const nodes: HarnessNode[] = [];
const schemas: string[] = [];
afterEach(async () => {
  client?.close();
  await fx?.close();
  await Promise.all(nodes.splice(0).map((n) => n.close()));
  await dropSchemas(schemas.splice(0));
  fx = undefined;
  client = undefined;
});

const BACKENDS: readonly (readonly [string, () => string | undefined])[] = [
  ["sqlite", () => undefined],
  [
    "postgres",
    () => {
      const schema = freshSchema();
      schemas.push(schema);
      return `${PG_URL}${PG_URL.includes("?") ? "&" : "?"}schema=${schema}`;
    },
  ],
];

async function node(version: string, prefix = "say "): Promise<string> {
  const n = await serveHarness(versioned(version, prefix), { listen: "127.0.0.1:0", actors: false });
  nodes.push(n);
  return n.address;
}

let journalOf: () => string | undefined = () => undefined;

async function started(): Promise<HarnessHostClient> {
  const journal = journalOf();
  const f = (fx = await startFixture(journal !== undefined ? { config: { journal } } : {}));
  client = connect({ address: f.server.addr, registryAddress: f.server.registryAddr });
  return client;
}

async function register(c: HarnessHostClient, version: string, address: string): Promise<void> {
  await c.harnesses.register({ name: "ver", version, address, resumability: "STATELESS_REPLAY" });
}

async function exec(c: HarnessHostClient, p: { session?: string; harness?: string; input: string }) {
  return c.sessions.exec(p).result();
}

describe.each(BACKENDS)("versions over gRPC (%s registry)", (_backend, journal) => {
  beforeEach(() => {
    journalOf = journal;
  });

  it("v1SessionsKeepRunningAfterV2Registers", async () => {
    const c = await started();
    await register(c, "1", await node("1"));
    const old = await exec(c, { harness: "ver", input: "a" });
    const uid = old.session.metadata?.uid ?? "";
    await register(c, "2", await node("2"));
    const fresh = await exec(c, { harness: "ver", input: "b" });
    const next = await exec(c, { session: uid, input: "c" });
    expect(next.outputs).toEqual(["echo:say c"]);
    const versions = await c.versions.list("ver");
    const byVersion = Object.fromEntries(versions.map((v) => [v.version, v]));
    expect(byVersion["1"]).toMatchObject({ state: "active", isDefault: false, pinnedSessions: [uid] });
    expect(byVersion["2"]).toMatchObject({
      state: "active",
      isDefault: true,
      pinnedSessions: [fresh.session.metadata?.uid],
    });
  });

  it("retireRefusalListsPinnedSessions", async () => {
    const c = await started();
    await register(c, "1", await node("1"));
    const a = (await exec(c, { harness: "ver", input: "a" })).session.metadata?.uid ?? "";
    const b = (await exec(c, { harness: "ver", input: "b" })).session.metadata?.uid ?? "";
    await register(c, "2", await node("2"));
    const refused = await c.versions.retire("ver", "1").catch((err: unknown) => err);
    expect(refused).toMatchObject({ status: "FAILED_PRECONDITION" });
    const message = (refused as Error).message;
    for (const uid of [a, b]) expect(message).toContain(uid);
    expect((await c.versions.list("ver")).find((v) => v.version === "1")?.state).toBe("active");
    // Upgrading one session and forcing the retirement strands the other until it is upgraded too.
    expect(await c.versions.upgrade(a, "2")).toMatchObject({ fromVersion: "1", toVersion: "2", replayedTurns: 1 });
    const retired = await c.versions.retire("ver", "1", { force: true });
    expect(retired).toMatchObject({ state: "retired", pinnedSessions: [b] });
    expect((await exec(c, { session: a, input: "x" })).outputs).toEqual(["echo:say x"]);
    const stranded = await exec(c, { session: b, input: "y" }).catch((err: unknown) => err);
    expect(stranded).toMatchObject({ status: "FAILED_PRECONDITION" });
    expect((stranded as Error).message).toContain(`harnesshost upgrade --session ${b} --to-version 2`);
    await c.versions.upgrade(b, "2");
    expect((await exec(c, { session: b, input: "z" })).outputs).toEqual(["echo:say z"]);
  });

  it("incompatibleUpgradeRefusedOverTheWire", async () => {
    const c = await started();
    await register(c, "1", await node("1"));
    const s = await exec(c, { harness: "ver", input: "a" });
    const uid = s.session.metadata?.uid ?? "";
    await register(c, "3", await node("3", "please say "));
    const err = await c.versions.upgrade(uid, "3").catch((e: unknown) => e);
    expect(err).toMatchObject({ status: "FAILED_PRECONDITION" });
    expect((err as Error).message).toMatch(/replay diverged at seq \d+: model input hash mismatch/);
    expect((err as Error).message).toMatch(/expected MODEL_CALL input_hash [0-9a-f]{64}; got MODEL_CALL input_hash/);
    expect((await c.sessions.get(uid)).lastSeq).toBe(s.session.lastSeq);
  });
});

describe("pinned sessions survive a host restart (sqlite)", () => {
  it("retireRefusalListsPinnedSessionsAfterAHostRestart", async () => {
    journalOf = () => undefined;
    const c = await started();
    await register(c, "1", await node("1"));
    const a = (await exec(c, { harness: "ver", input: "a" })).session.metadata?.uid ?? "";
    const b = (await exec(c, { harness: "ver", input: "b" })).session.metadata?.uid ?? "";
    await register(c, "2", await node("2"));
    await c.versions.upgrade(b, "2");
    c.close();
    await fx?.restart();
    const after = (client = connect({ address: fx!.server.addr, registryAddress: fx!.server.registryAddr }));
    // The pins are read from the session rows (one indexed query), as the logs define them.
    expect(await fx!.host.journal.pinnedSessions("ver")).toEqual(
      [
        { uid: a, version: "1", digest: "" },
        { uid: b, version: "2", digest: "" },
      ].sort((x, y) => (x.uid < y.uid ? -1 : 1)),
    );
    const refused = await after.versions.retire("ver", "1").catch((err: unknown) => err);
    expect(refused).toMatchObject({ status: "FAILED_PRECONDITION" });
    expect((refused as Error).message).toContain(`1 pinned session(s): ${a}`);
    expect((refused as Error).message).not.toContain(b);
    const listed = Object.fromEntries((await after.versions.list("ver")).map((v) => [v.version, v.pinnedSessions]));
    expect(listed).toEqual({ "1": [a], "2": [b] });
  });
});
