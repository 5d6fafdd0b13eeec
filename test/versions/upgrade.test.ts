// Harness versions in one host (docs/versioning.md): pinning, side-by-side versions, stateless
// upgrades checked by replay, memory upgrades through the harness's migrate, and refusals that change
// nothing. Every test drives a real Host on a temp data dir (SQLite journal).
import { splitRecordedVersion } from "../../src/journal/pin.js";
import { afterEach, describe, expect, it } from "vitest";
import { EventKind } from "../../src/gen/agentsessions/v1/common_pb.js";
import { DivergedError } from "../../src/controller/serving-sink.js";
import { SessionLog } from "../../src/projection/session-log.js";
import { ErrorCode } from "../../src/errors/index.js";
import type { Host } from "../../src/host/host.js";
import type { HarnessSpecFlag } from "../../src/host/config.js";
import {
  closeAll,
  CountingModel,
  expectChainVerifies,
  fixturePath,
  openTestHost,
  records,
  rejectsWithCode,
  signal,
  turn,
} from "../tiers/helpers.js";

afterEach(closeAll);

function ver(version: string, runtime: "local" | "spawned" = "local", file = `versioned-v${version}.ts`) {
  return { name: "ver", version, runtime, target: fixturePath(file) } satisfies Partial<HarnessSpecFlag>;
}

function counter(version: string) {
  return {
    name: "vc",
    version,
    runtime: "spawned",
    target: fixturePath(`versioned-counter-v${version}.ts`),
  } satisfies Partial<HarnessSpecFlag>;
}

/** The harness version (build digest split off) of every EXECUTION_START of the session, in order. */
async function startVersions(host: Host, session: string): Promise<string[]> {
  return (await records(host, session)).flatMap((r) =>
    r.event.body.case === "executionStart" ? [splitRecordedVersion(r.event.body.value.harnessVersion).version] : [],
  );
}

async function newSession(host: Host, harness: string): Promise<string> {
  return (await host.createSession({ harness })).uid;
}

describe("pinning", () => {
  it("v1SessionsKeepRunningAfterV2Registers", async () => {
    const v1only = await openTestHost({ harnesses: [ver("1")] });
    const old = await newSession(v1only, "ver");
    expect(await turn(v1only, old, "a")).toEqual(["echo:say a"]);
    const dataDir = v1only.config.dataDir;
    await v1only.close();
    // Deploy version 2 beside 1: new sessions get 2, the v1 session keeps running on 1.
    const both = await openTestHost({ dataDir, harnesses: [ver("1"), ver("2")] });
    const fresh = await newSession(both, "ver");
    expect(await turn(both, fresh, "b")).toEqual(["echo:say b"]);
    expect(await turn(both, old, "c")).toEqual(["echo:say c"]);
    expect(await startVersions(both, old)).toEqual(["1", "1"]);
    expect(await startVersions(both, fresh)).toEqual(["2"]);
    expect((await both.placer.sessionLog(old)).pinnedVersion).toMatchObject({ harness: "ver", version: "1" });
    // The v1 session still replays on 1.
    expect((await both.placer.replay(old, signal())).outputs).toEqual(["echo:say a", "echo:say c"]);
  });

  it("pinnedSessionRefusedWhenItsVersionIsNotServed", async () => {
    const v1only = await openTestHost({ harnesses: [ver("1")] });
    const old = await newSession(v1only, "ver");
    await turn(v1only, old);
    const dataDir = v1only.config.dataDir;
    await v1only.close();
    const v2only = await openTestHost({ dataDir, harnesses: [ver("2")] });
    const head = (await v2only.journal.head(old)).seq;
    const err = await rejectsWithCode(turn(v2only, old), ErrorCode.FailedPrecondition);
    expect(err.message).toContain('pinned to harness "ver" version "1"');
    expect(err.message).toContain(`harnesshost upgrade --session ${old} --to-version 2`);
    expect((await v2only.journal.head(old)).seq).toBe(head);
  });

  it("unversionedHarnessReportingAnotherVersionIsRefused", async () => {
    const first = await openTestHost({
      harnesses: [{ name: "ver", runtime: "local", target: fixturePath("versioned-v1.ts") }],
    });
    const s = await newSession(first, "ver");
    await turn(first, s);
    const dataDir = first.config.dataDir;
    await first.close();
    const second = await openTestHost({
      dataDir,
      harnesses: [{ name: "ver", runtime: "local", target: fixturePath("versioned-v2.ts") }],
    });
    const err = await rejectsWithCode(turn(second, s), ErrorCode.FailedPrecondition);
    expect(err.message).toContain('now reports version "2"');
    const up = await second.placer.upgrade(s, "2", signal());
    expect(up).toMatchObject({ from: "1", to: "2", replayedTurns: 1 });
    expect(await turn(second, s, "x")).toEqual(["echo:say x"]);
  });
});

describe("stateless upgrade", () => {
  it("compatibleUpgradeContinues", async () => {
    const model = new CountingModel();
    const host = await openTestHost({ harnesses: [ver("1"), ver("2")] }, { model });
    // Pin a session to 1 (it was created while 2 is the default, so give it its first turn on 1).
    const s = await newSession(host, "ver");
    await host.placer.upgrade(s, "1", signal());
    await turn(host, s, "a");
    await turn(host, s, "b");
    expect(await startVersions(host, s)).toEqual(["1", "1"]);
    const calls = model.calls;
    const up = await host.placer.upgrade(s, "2", signal());
    expect(model.calls).toBe(calls); // the check replayed with zero model calls
    expect(up).toMatchObject({ from: "1", to: "2", replayedTurns: 2 });
    const log = await host.placer.sessionLog(s);
    expect(log.pinnedVersion).toMatchObject({ version: "2", seq: up.upgradeSeq });
    expect(await turn(host, s, "c")).toEqual(["echo:say c"]);
    expect(await startVersions(host, s)).toEqual(["1", "1", "2"]);
    // Replay runs every turn under 2: the v1 turns are certified for it by the upgrade record.
    expect((await host.placer.replay(s, signal())).outputs).toEqual(["echo:say a", "echo:say b", "echo:say c"]);
    // Upgrading to the version the session is on changes nothing.
    const head = (await host.journal.head(s)).seq;
    expect((await host.placer.upgrade(s, "2", signal())).upgradeSeq).toBe(0);
    expect((await host.journal.head(s)).seq).toBe(head);
    await expectChainVerifies(host, s);
  });

  it("incompatibleUpgradeRefusedWithDivergentSeqAndNothingChanged", async () => {
    const host = await openTestHost({ harnesses: [ver("3"), ver("1")] });
    const s = await newSession(host, "ver");
    await turn(host, s, "a");
    expect(await startVersions(host, s)).toEqual(["1"]);
    const modelCallSeq = (await records(host, s)).find((r) => r.event.kind === EventKind.EVENT_MODEL_CALL)?.seq;
    const before = await host.journal.getSession(s);
    const err = await rejectsWithCode(host.placer.upgrade(s, "3", signal()), ErrorCode.Diverged);
    expect(err).toBeInstanceOf(DivergedError);
    const d = err as DivergedError;
    expect(d.seq).toBe(modelCallSeq);
    expect(d.expected).toMatch(/^MODEL_CALL input_hash [0-9a-f]{64}$/);
    expect(d.actual).toMatch(/^MODEL_CALL input_hash [0-9a-f]{64}$/);
    expect(d.expected).not.toBe(d.actual);
    expect(err.message).toContain(`at seq ${modelCallSeq}`);
    const after = await host.journal.getSession(s);
    expect(after?.lastSeq).toBe(before?.lastSeq);
    expect(after?.fence).toBe(before?.fence);
    expect((await host.placer.sessionLog(s)).pinnedVersion?.version).toBe("1");
    expect(await turn(host, s, "b")).toEqual(["echo:say b"]);
    expect(await startVersions(host, s)).toEqual(["1", "1"]);
  });

  it("upgradeRefusedWhileATurnIsPending", async () => {
    const model = new CountingModel();
    const host = await openTestHost({ harnesses: [ver("1"), ver("2")] }, { model });
    const s = await newSession(host, "ver");
    await host.placer.upgrade(s, "1", signal());
    model.failNext();
    await expect(turn(host, s)).rejects.toThrow();
    const head = (await host.journal.head(s)).seq;
    const err = await rejectsWithCode(host.placer.upgrade(s, "2", signal()), ErrorCode.FailedPrecondition);
    expect(err.message).toContain("interrupted or parked turn");
    expect((await host.journal.head(s)).seq).toBe(head);
  });

  it("upgradeToAVersionNotServedIsRefused", async () => {
    const host = await openTestHost({ harnesses: [ver("1")] });
    const s = await newSession(host, "ver");
    await turn(host, s);
    const err = await rejectsWithCode(host.placer.upgrade(s, "9", signal()), ErrorCode.FailedPrecondition);
    expect(err.message).toContain('version "9" is not served');
  });
});

describe("memory upgrade", () => {
  it("memoryMigrationAppliedExactlyOnce", async () => {
    const host = await openTestHost({ harnesses: [counter("1"), counter("2")] });
    const s = await newSession(host, "vc");
    await host.placer.upgrade(s, "1", signal());
    for (const n of [1, 2, 3]) expect(await turn(host, s)).toEqual([String(n)]);
    const up = await host.placer.upgrade(s, "2", signal());
    expect(up).toMatchObject({ from: "1", to: "2" });
    expect(up.snapshot).toMatch(/^sha256:[0-9a-f]{64}$/);
    // N+1 on the migrated state shape; migrate ran once and never again.
    expect(await turn(host, s)).toEqual(["4 migrations=1"]);
    expect(await turn(host, s)).toEqual(["5 migrations=1"]);
    await host.placer.suspend(s, signal());
    await host.placer.resume(s, signal());
    expect(await turn(host, s)).toEqual(["6 migrations=1"]);
    expect(await startVersions(host, s)).toEqual(["1", "1", "1", "2", "2", "2"]);
    await expectChainVerifies(host, s);
  });

  it("unknownSnapshotVersionRefused", async () => {
    const host = await openTestHost({ harnesses: [counter("2"), counter("1")] });
    const s = await newSession(host, "vc");
    await host.placer.upgrade(s, "2", signal());
    expect(await turn(host, s)).toEqual(["1 migrations=0"]);
    const before = await host.journal.getSession(s);
    // Version 1 does not know version 2's snapshots (it declares no migrate): refused, nothing written.
    const err = await rejectsWithCode(host.placer.upgrade(s, "1", signal()), ErrorCode.FailedPrecondition);
    expect(err.message).toContain('written by harness version "2"');
    const after = await host.journal.getSession(s);
    expect(after?.lastSeq).toBe(before?.lastSeq);
    expect(after?.fence).toBe(before?.fence);
    expect(await turn(host, s)).toEqual(["2 migrations=0"]);
  });
});

describe("projection", () => {
  it("pinnedVersionIsTheLastTurnOrUpgrade", async () => {
    const host = await openTestHost({ harnesses: [ver("1"), ver("2")] });
    const s = await newSession(host, "ver");
    expect((await host.placer.sessionLog(s)).pinnedVersion).toBeUndefined();
    await turn(host, s);
    const log = SessionLog.of(await records(host, s));
    expect(log.pinnedVersion).toMatchObject({ harness: "ver", version: "2" });
    expect(log.upgrades).toEqual([]);
  });
});
