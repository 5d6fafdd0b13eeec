// Build digests (docs/versioning.md): a turn records the digest of the build that ran it with its
// version; the pin carries it; a session whose pinned digest differs from the running build of the SAME
// version runs on (a warning, not a refusal) and shows the drift in GetSession; `harness list` shows the
// digest per version; a journal written without digests reads as "unknown".
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { connect, type HarnessHostClient } from "../../src/client/index.js";
import { SessionLog } from "../../src/projection/session-log.js";
import { EventKind } from "../../src/gen/agentsessions/v1/common_pb.js";
import { buildsDiffer, recordedVersion, splitRecordedVersion } from "../../src/journal/pin.js";
import { serveHarness, type HarnessNode } from "../../src/node/index.js";
import { createLog } from "../../src/obs/log.js";
import { fileDigest } from "../../src/runtime/build-digest.js";
import { PIN_ANNOTATION, type PinAnnotation } from "../../src/wire/annotations.js";
import { versioned } from "../fixtures/harnesses/versioned.js";
import { startFixture, type Fixture } from "../server/helpers.js";
import { closeAll, openTestHost, signal } from "../tiers/helpers.js";
import { textMessage } from "../../src/controller/index.js";
import { executionStartEvent } from "../journal/events.js";

const FIXTURES = join(import.meta.dirname, "..", "fixtures", "harnesses");
const DIGEST_A = `sha256:${"ab".repeat(32)}`;

let fx: Fixture | undefined;
let client: HarnessHostClient | undefined;
const files: string[] = [];
const nodes: HarnessNode[] = [];
afterEach(async () => {
  client?.close();
  await fx?.close();
  await Promise.all(nodes.splice(0).map((n) => n.close()));
  await closeAll();
  for (const f of files.splice(0)) rmSync(f, { force: true });
  fx = undefined;
  client = undefined;
});

/** A copy of a fixture module (version 1 by default) that a test may edit (a new build of the same version). */
function moduleCopy(of = "versioned-v1.ts"): string {
  const file = join(FIXTURES, `tmp-build-${randomBytes(4).toString("hex")}.ts`);
  writeFileSync(file, readFileSync(join(FIXTURES, of)));
  files.push(file);
  return file;
}

function reconnect(f: Fixture): HarnessHostClient {
  client?.close();
  client = connect({ address: f.server.addr, registryAddress: f.server.registryAddr });
  return client;
}

async function recordedStartVersions(f: Fixture, uid: string): Promise<string[]> {
  const out: string[] = [];
  for (const r of await f.host.journal.readEvents(uid))
    if (r.event.kind === EventKind.EVENT_EXECUTION_START && r.event.body.case === "executionStart")
      out.push(r.event.body.value.harnessVersion);
  return out;
}

async function pinAnnotation(c: HarnessHostClient, uid: string): Promise<PinAnnotation> {
  const s = await c.sessions.get(uid);
  return JSON.parse(s.annotations[PIN_ANNOTATION] ?? "null") as PinAnnotation;
}

describe("build digests", () => {
  it("aBuildDriftNeedsBothDigestsKnownAndDifferent", () => {
    const OTHER = `sha256:${"ef".repeat(32)}`;
    expect(buildsDiffer(DIGEST_A, OTHER)).toBe(true);
    expect(buildsDiffer(DIGEST_A, DIGEST_A)).toBe(false);
    expect(buildsDiffer("", OTHER)).toBe(false);
    expect(buildsDiffer(DIGEST_A, "")).toBe(false);
    expect(buildsDiffer("", "")).toBe(false);
  });

  it("theRecordedVersionCarriesTheBuildDigestAndOldJournalsReadAsUnknown", () => {
    expect(recordedVersion("1", "")).toBe("1");
    expect(recordedVersion("1", DIGEST_A)).toBe(`1+${DIGEST_A}`);
    expect(splitRecordedVersion(`1+${DIGEST_A}`)).toEqual({ version: "1", digest: DIGEST_A });
    expect(splitRecordedVersion("1")).toEqual({ version: "1", digest: "" });
    // A version that merely contains "+" (semver build metadata of the author's own) is not split.
    expect(splitRecordedVersion("1.0.0+build5")).toEqual({ version: "1.0.0+build5", digest: "" });
    const log = SessionLog.of([
      { seq: 1, event: executionStartEvent("ver", "1", "x1") },
      { seq: 2, event: executionStartEvent("ver", `1+${DIGEST_A}`, "x2") },
    ]);
    const [old, current] = log.allExecutions();
    expect(old).toMatchObject({ harnessVersion: "1", harnessDigest: "" });
    expect(current).toMatchObject({ harnessVersion: "1", harnessDigest: DIGEST_A });
    expect(log.pinnedVersion).toEqual({ harness: "ver", version: "1", digest: DIGEST_A, seq: 2 });
  });

  it.each(["local", "spawned"] as const)(
    "aModuleHarnessTurnRecordsItsEntryFileDigestAndHarnessListShowsIt (%s)",
    async (runtime) => {
      const file = moduleCopy();
      const digest = fileDigest(file);
      const f = (fx = await startFixture({ config: { harnesses: [{ name: "ver", runtime, target: file }] } }));
      const c = reconnect(f);
      const { session, outputs } = await c.sessions.exec({ harness: "ver", input: "a" }).result();
      expect(outputs).toEqual(["echo:say a"]);
      const uid = session.metadata?.uid ?? "";
      expect(await recordedStartVersions(f, uid)).toEqual([`1+${digest}`]);
      expect((await f.host.journal.getSession(uid))?.pin).toMatchObject({ version: "1", digest });
      expect(await pinAnnotation(c, uid)).toEqual({ harness: "ver", version: "1", digest, serving_digest: digest });
      const [listed] = await c.versions.list("ver");
      expect(listed).toMatchObject({ buildDigest: digest, pinnedSessions: [uid], pinnedDigests: [digest] });
    },
  );

  it("aBuildChangeUnderTheSameVersionWarnsAndShowsInGetButRunsOn", async () => {
    const file = moduleCopy();
    const before = fileDigest(file);
    const lines: string[] = [];
    const logger = createLog({ level: "warn", format: "json", sink: { write: (l) => void lines.push(l) } });
    const f = (fx = await startFixture({
      config: { harnesses: [{ name: "ver", runtime: "local", target: file }] },
      overrides: { logger },
    }));
    let c = reconnect(f);
    const uid = (await c.sessions.exec({ harness: "ver", input: "a" }).result()).session.metadata?.uid ?? "";
    // The author edits the module and does not bump its version.
    writeFileSync(file, `${readFileSync(file, "utf8")}\n// a changed build of version 1\n`);
    const after = fileDigest(file);
    expect(after).not.toBe(before);
    await f.restart();
    c = reconnect(f);
    expect(await pinAnnotation(c, uid)).toEqual({
      harness: "ver",
      version: "1",
      digest: before,
      serving_digest: after,
      drift: true,
    });
    expect(lines.filter((l) => l.includes("without a version bump"))).toEqual([]);
    const next = await c.sessions.exec({ session: uid, input: "b" }).result();
    expect(next.outputs).toEqual(["echo:say b"]);
    const warned = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l["session"] === uid);
    expect(warned).toEqual([
      expect.objectContaining({ level: 40, version: "1", pinned_digest: before, running_digest: after }),
    ]);
    expect(await recordedStartVersions(f, uid)).toEqual([`1+${before}`, `1+${after}`]);
    expect(await pinAnnotation(c, uid)).toEqual({ harness: "ver", version: "1", digest: after, serving_digest: after });
  });

  it("aRemoteNodeReportsItsBuildDigestInNodeInfo", async () => {
    const node = await serveHarness(versioned("1", "say "), { listen: "127.0.0.1:0", buildDigest: DIGEST_A });
    nodes.push(node);
    const f = (fx = await startFixture());
    const c = reconnect(f);
    await c.harnesses.register({ name: "ver", version: "1", address: node.address, resumability: "STATELESS_REPLAY" });
    const uid = (await c.sessions.exec({ harness: "ver", input: "a" }).result()).session.metadata?.uid ?? "";
    expect(await recordedStartVersions(f, uid)).toEqual([`1+${DIGEST_A}`]);
    expect((await c.versions.list("ver"))[0]).toMatchObject({ buildDigest: DIGEST_A, pinnedDigests: [DIGEST_A] });
  });
  it("aResumeUnderAnotherBuildOfTheSameVersionWarnsAndRunsOn", async () => {
    // An `ask` module parks its turn on an approval; the author edits the module without a version
    // bump; the resumed turn runs on the new build with the same warning an Exec gets.
    const file = join(FIXTURES, `tmp-ask-${randomBytes(4).toString("hex")}.ts`);
    writeFileSync(file, 'export { default } from "../../../harnesses/ask/index.js";\n');
    files.push(file);
    const before = fileDigest(file);
    const first = await openTestHost({ harnesses: [{ name: "askmod", runtime: "local", target: file }] });
    const uid = (await first.createSession({ harness: "askmod" })).uid;
    const parked = await first.placer.exec({ session: uid, inputs: [textMessage("user", "hi")], signal: signal() });
    expect(parked.parked).toBeDefined();
    await first.placer.approve(uid, { ...parked.parked!, approved: true, reason: "" });
    const dataDir = first.config.dataDir;
    await first.close();

    writeFileSync(file, `${readFileSync(file, "utf8")}// a changed build of version 1\n`);
    const after = fileDigest(file);
    expect(after).not.toBe(before);
    const lines: string[] = [];
    const logger = createLog({ level: "warn", format: "json", sink: { write: (l) => void lines.push(l) } });
    const second = await openTestHost(
      { dataDir, harnesses: [{ name: "askmod", runtime: "local", target: file }] },
      { logger },
    );
    const resumed = await second.placer.resume(uid, signal());
    expect(resumed.turn?.outputs).toEqual(["receipt: approved"]);
    const warned = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l["session"] === uid);
    expect(warned).toEqual([
      expect.objectContaining({ level: 40, version: "1", pinned_digest: before, running_digest: after }),
    ]);
  });
  it("anUpgradeRecordsTheTargetBuildDigestSoGetAndListShowItBeforeTheNextTurn", async () => {
    const v1 = moduleCopy();
    const v2 = moduleCopy("versioned-v2.ts");
    const [d1, d2] = [fileDigest(v1), fileDigest(v2)];
    const f = (fx = await startFixture({
      config: {
        harnesses: [
          { name: "ver", version: "1", runtime: "local", target: v1 },
          { name: "ver", version: "2", runtime: "local", target: v2 },
        ],
      },
    }));
    const c = reconnect(f);
    const uid = (await c.sessions.exec({ harness: "ver", input: "a" }).result()).session.metadata?.uid ?? "";
    await c.versions.upgrade(uid, "1");
    expect((await f.host.journal.getSession(uid))?.pin).toMatchObject({ version: "1", digest: d1 });
    await c.sessions.exec({ session: uid, input: "b" }).result();
    const up = await c.versions.upgrade(uid, "2");
    expect(up).toMatchObject({ fromVersion: "1", toVersion: "2" });
    // No turn has run on 2 yet: the upgrade record alone pins the session to 2's build.
    expect((await f.host.journal.getSession(uid))?.pin).toMatchObject({ version: "2", digest: d2 });
    expect(await pinAnnotation(c, uid)).toEqual({ harness: "ver", version: "2", digest: d2, serving_digest: d2 });
    const listed = await c.versions.list("ver");
    expect(listed.find((v) => v.version === "2")).toMatchObject({ pinnedSessions: [uid], pinnedDigests: [d2] });
    // The journal says the same when read again (a restart folds the pin from the records).
    expect((await f.host.placer.sessionLog(uid)).pinnedVersion).toMatchObject({ version: "2", digest: d2 });
  });

  it("anUpgradeToANodeRecordsTheDigestTheNodeReports", async () => {
    const DIGEST_B = `sha256:${"cd".repeat(32)}`;
    const n1 = await serveHarness(versioned("1", "say "), { listen: "127.0.0.1:0", buildDigest: DIGEST_A });
    const n2 = await serveHarness(versioned("2", "say "), { listen: "127.0.0.1:0", buildDigest: DIGEST_B });
    nodes.push(n1, n2);
    const f = (fx = await startFixture());
    const c = reconnect(f);
    await c.harnesses.register({ name: "ver", version: "1", address: n1.address, resumability: "STATELESS_REPLAY" });
    const uid = (await c.sessions.exec({ harness: "ver", input: "a" }).result()).session.metadata?.uid ?? "";
    await c.harnesses.register({ name: "ver", version: "2", address: n2.address, resumability: "STATELESS_REPLAY" });
    await c.versions.upgrade(uid, "2");
    expect(await pinAnnotation(c, uid)).toMatchObject({ version: "2", digest: DIGEST_B });
    const listed = await c.versions.list("ver");
    expect(listed.find((v) => v.version === "2")).toMatchObject({ pinnedSessions: [uid], pinnedDigests: [DIGEST_B] });
  });
});
