// The backend contract every Journal must pass (docs/protocol.md §5): one function, called once per backend, so
// memory, SQLite and PostgreSQL are proven to behave identically. Backend-specific checks (raw-SQL
// tampering, schema stamps, multi-process writers) live in each backend's own test file.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { hashRecord } from "../../src/canon/index.js";
import { ErrorCode, HostError } from "../../src/errors/index.js";
import {
  EventKind,
  IdentityRefSchema,
  Lifecycle_Kind,
  OriginSchema,
  type Event,
} from "../../src/gen/agentsessions/v1/common_pb.js";
import type {
  ComputeStateName,
  Journal,
  ListSessionsQuery,
  SessionInfo,
  StoredRegistration,
} from "../../src/journal/types.js";
import {
  approvalRequestEvent,
  approvalResultEvent,
  endEvent,
  executionStartEvent,
  inputEvent,
  lifecycleEvent,
  outputEvent,
  toolCallEvent,
  unhashableEvent,
  upgradeRecordEvent,
} from "./events.js";
import { SessionLog } from "../../src/projection/session-log.js";
import { appendUnderNewFence } from "../../src/journal/fenced-append.js";
import { created } from "./sessions.js";

export interface JournalUnderTest {
  journal: Journal;
  cleanup(): Promise<void>;
}

async function expectHostError(promise: Promise<unknown>, code: ErrorCode): Promise<HostError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, `expected HostError ${code}`).toBeInstanceOf(HostError);
  expect((err as HostError).code).toBe(code);
  return err as HostError;
}

async function appendAll(j: Journal, session: string, events: readonly Event[], fence = 0): Promise<void> {
  await created(j, session);
  for (const ev of events) {
    const head = await j.head(session);
    await j.append(session, head.seq, fence, ev);
  }
}

function registration(name: string, overrides: Partial<StoredRegistration> = {}): StoredRegistration {
  return {
    name,
    uid: `harness-${name}`,
    spec: `{"descriptor_id":"${name}"}`,
    specDigest: `sha256:${name}`,
    state: "active",
    retireReason: "",
    retiredAtMs: 0,
    createdAtMs: 1_700_000_000_000,
    updatedAtMs: 1_700_000_000_000,
    ...overrides,
  };
}

export function journalConformance(name: string, make: () => Promise<JournalUnderTest>): void {
  describe(`journal conformance: ${name}`, () => {
    let under: JournalUnderTest;
    let j: Journal;

    beforeEach(async () => {
      under = await make();
      j = under.journal;
    });

    afterEach(async () => {
      await under.cleanup();
    });

    describe("append", () => {
      it("assigns dense seqs from 1 and chains each record on its predecessor", async () => {
        await created(j, "s-dense");
        const r1 = await j.append("s-dense", 0, 0, inputEvent("hi"));
        const r2 = await j.append("s-dense", 1, 0, outputEvent("hello"));
        const r3 = await j.append("s-dense", 2, 0, endEvent());
        expect([r1.seq, r2.seq, r3.seq]).toEqual([1, 2, 3]);
        expect(r1.prevHash).toBe("");
        expect(r2.prevHash).toBe(r1.contentHash);
        expect(r3.prevHash).toBe(r2.contentHash);
        expect(r2.contentHash).toBe(hashRecord(r1.contentHash, 2, outputEvent("hello")));
        expect(r1.contentHash).toMatch(/^[0-9a-f]{64}$/);
        expect(await j.head("s-dense")).toEqual({ seq: 3, hash: r3.contentHash });
        const stored = await j.readRange("s-dense");
        expect(stored.map((r) => [r.seq, r.prevHash, r.contentHash])).toEqual(
          [r1, r2, r3].map((r) => [r.seq, r.prevHash, r.contentHash]),
        );
        expect(stored[1]?.event.body.case).toBe("message");
      });

      it("refuses a stale expected seq with Conflict and writes nothing", async () => {
        await created(j, "s-cas");
        await j.append("s-cas", 0, 0, inputEvent("a"));
        await expectHostError(j.append("s-cas", 0, 0, inputEvent("b")), ErrorCode.Conflict);
        await expectHostError(j.append("s-cas", 2, 0, inputEvent("c")), ErrorCode.Conflict);
        expect((await j.head("s-cas")).seq).toBe(1);
        expect(await j.readRange("s-cas")).toHaveLength(1);
      });

      it("refuses a writer whose fence was superseded, and accepts the current or a newer one", async () => {
        await created(j, "s-fence");
        expect(await j.currentFence("s-fence")).toBe(0);
        expect(await j.newFence("s-fence")).toBe(1);
        await j.append("s-fence", 0, 1, inputEvent("a"));
        expect(await j.newFence("s-fence")).toBe(2);
        expect(await j.currentFence("s-fence")).toBe(2);
        await expectHostError(j.append("s-fence", 1, 1, inputEvent("zombie")), ErrorCode.Fenced);
        expect(await j.readRange("s-fence")).toHaveLength(1);
        const r = await j.append("s-fence", 1, 2, inputEvent("b"));
        expect(r.fence).toBe(2);
        await j.append("s-fence", 2, 7, inputEvent("c"));
        expect((await j.head("s-fence")).seq).toBe(3);
      });

      it("checks CAS before the fence", async () => {
        await created(j, "s-order");
        await j.newFence("s-order");
        await j.newFence("s-order");
        await j.append("s-order", 0, 2, inputEvent("a"));
        await expectHostError(j.append("s-order", 0, 1, inputEvent("both stale")), ErrorCode.Conflict);
        await expectHostError(j.append("s-order", 1, 1, inputEvent("fence stale")), ErrorCode.Fenced);
      });

      it("refuses an event with no canonical form and writes nothing", async () => {
        await created(j, "s-nan");
        await expectHostError(j.append("s-nan", 0, 0, unhashableEvent()), ErrorCode.InvalidArgument);
        expect(await j.head("s-nan")).toEqual({ seq: 0, hash: "" });
        expect((await j.getSession("s-nan"))?.lastSeq).toBe(0);
        await j.append("s-nan", 0, 0, inputEvent("fine"));
        await expectHostError(j.append("s-nan", 1, 0, unhashableEvent()), ErrorCode.InvalidArgument);
        expect(await j.readRange("s-nan")).toHaveLength(1);
      });

      // docs/protocol.md §18 rule 8: rows come from createSession, fork and import only.
      it("refusesAWriteToASessionNobodyCreatedWithNotFoundAndCreatesNothing", async () => {
        await expectHostError(j.append("s-auto", 0, 0, inputEvent("hi")), ErrorCode.NotFound);
        await expectHostError(j.appendBatch("s-auto", 0, 0, [inputEvent("hi")]), ErrorCode.NotFound);
        await expectHostError(j.newFence("s-auto"), ErrorCode.NotFound);
        await expectHostError(appendUnderNewFence(j, "s-auto", 0, [inputEvent("hi")]), ErrorCode.NotFound);
        expect(await j.getSession("s-auto")).toBeUndefined();
        expect(await j.allSessionUids()).not.toContain("s-auto");
        await j.createSession({ uid: "s-auto", project: "", harness: "" });
        const r = await j.append("s-auto", 0, 0, inputEvent("hi"));
        expect(await j.getSession("s-auto")).toMatchObject({ project: "default", lastSeq: 1, lastHash: r.contentHash });
      });
    });

    describe("appendBatch", () => {
      it("chains several events in one commit", async () => {
        await created(j, "s-batch");
        await j.append("s-batch", 0, 0, inputEvent("first"));
        const recs = await j.appendBatch("s-batch", 1, 0, [inputEvent("a"), inputEvent("b"), outputEvent("c")]);
        expect(recs.map((r) => r.seq)).toEqual([2, 3, 4]);
        expect(recs[1]?.prevHash).toBe(recs[0]?.contentHash);
        expect((await j.verify("s-batch")).ok).toBe(true);
      });

      it("writes none of the batch when any event fails, or when CAS or fence fails", async () => {
        await created(j, "s-batch-atomic");
        await j.append("s-batch-atomic", 0, 0, inputEvent("first"));
        await expectHostError(
          j.appendBatch("s-batch-atomic", 1, 0, [inputEvent("a"), unhashableEvent(), inputEvent("c")]),
          ErrorCode.InvalidArgument,
        );
        await expectHostError(
          j.appendBatch("s-batch-atomic", 0, 0, [inputEvent("a"), inputEvent("b")]),
          ErrorCode.Conflict,
        );
        await j.newFence("s-batch-atomic");
        await expectHostError(
          j.appendBatch("s-batch-atomic", 1, 0, [inputEvent("a"), inputEvent("b")]),
          ErrorCode.Fenced,
        );
        expect(await j.readRange("s-batch-atomic")).toHaveLength(1);
        expect((await j.head("s-batch-atomic")).seq).toBe(1);
        expect((await j.verify("s-batch-atomic")).ok).toBe(true);
      });
    });

    describe("read", () => {
      it("returns inclusive ranges, to=0 meaning the head", async () => {
        await appendAll(
          j,
          "s-range",
          [1, 2, 3, 4, 5].map((i) => outputEvent(`m${i}`)),
        );
        const seqs = async (from?: number, to?: number) => (await j.readRange("s-range", from, to)).map((r) => r.seq);
        expect(await seqs()).toEqual([1, 2, 3, 4, 5]);
        expect(await seqs(2, 4)).toEqual([2, 3, 4]);
        expect(await seqs(4)).toEqual([4, 5]);
        expect(await seqs(3, 0)).toEqual([3, 4, 5]);
        expect(await seqs(6)).toEqual([]);
        expect(await j.readRange("s-unknown")).toEqual([]);
        const texts = (await j.readRange("s-range", 5, 5)).map((r) =>
          r.event.body.case === "message" && r.event.body.value.parts[0]?.part.case === "text"
            ? r.event.body.value.parts[0].part.value.text
            : "",
        );
        expect(texts).toEqual(["m5"]);
      });

      it("streams a session longer than one page in order", async () => {
        await created(j, "s-pages");
        const total = 2_345;
        await j.appendBatch(
          "s-pages",
          0,
          0,
          Array.from({ length: total }, (_, i) => outputEvent(`p${i + 1}`)),
        );
        let expected = 1;
        let prev = "";
        for await (const rec of j.read("s-pages")) {
          expect(rec.seq).toBe(expected);
          expect(rec.prevHash).toBe(prev);
          prev = rec.contentHash;
          expected += 1;
        }
        expect(expected - 1).toBe(total);
        expect((await j.readRange("s-pages", 995, 1_005)).map((r) => r.seq)).toEqual(
          Array.from({ length: 11 }, (_, i) => 995 + i),
        );
        expect(await j.verify("s-pages")).toMatchObject({ ok: true, records: total });
      });

      it("readEvents returns readRange's seqs and events across pages", async () => {
        await created(j, "s-events");
        const total = 1_234;
        await j.appendBatch(
          "s-events",
          0,
          0,
          Array.from({ length: total }, (_, i) => outputEvent(`e${i + 1}`)),
        );
        const full = await j.readRange("s-events");
        const lean = await j.readEvents("s-events");
        expect(lean.map((r) => r.seq)).toEqual(full.map((r) => r.seq));
        expect(lean.map((r) => r.event)).toEqual(full.map((r) => r.event));
        expect((await j.readEvents("s-events", 999, 1_002)).map((r) => r.seq)).toEqual([999, 1_000, 1_001, 1_002]);
        expect(await j.readEvents("s-unknown")).toEqual([]);
      });
    });

    describe("verify", () => {
      it("accepts an intact chain and an empty or unknown session", async () => {
        await appendAll(j, "s-verify", [
          inputEvent("a"),
          toolCallEvent("c1", { city: "Paris", days: 2.5 }),
          endEvent(),
        ]);
        const head = await j.head("s-verify");
        expect(await j.verify("s-verify")).toEqual({ ok: true, session: "s-verify", records: 3, head });
        expect(await j.verify("s-nobody")).toMatchObject({ ok: true, records: 0 });
      });
    });

    describe("fork", () => {
      async function parentOf5(): Promise<string[]> {
        await appendAll(j, "s-parent", [
          inputEvent("a"),
          outputEvent("b"),
          inputEvent("c"),
          outputEvent("d"),
          endEvent(),
        ]);
        return (await j.readRange("s-parent")).map((r) => r.contentHash);
      }

      it("copies the prefix verbatim and appends a LIFECYCLE_FORK marker chained on the fork point", async () => {
        const parentHashes = await parentOf5();
        const recs = await j.fork("s-parent", "s-child", 3, { uid: "s-child", project: "p-fork", harness: "echo" });
        const child = await j.readRange("s-child");
        expect(child.map((r) => r.seq)).toEqual([1, 2, 3, 4]);
        expect(recs.map((r) => r.contentHash)).toEqual(child.map((r) => r.contentHash));
        expect(child.slice(0, 3).map((r) => r.contentHash)).toEqual(parentHashes.slice(0, 3));
        const marker = child[3];
        expect(marker?.prevHash).toBe(parentHashes[2]);
        expect(marker?.event.kind).toBe(EventKind.EVENT_LIFECYCLE);
        expect(marker?.event.executionId).toBe("");
        expect(marker?.event.body.case === "lifecycle" && marker.event.body.value).toMatchObject({
          kind: Lifecycle_Kind.LIFECYCLE_FORK,
          detail: "parent@3",
        });
        expect(marker?.fence).toBe(1);
        expect(await j.verify("s-parent")).toMatchObject({ ok: true, records: 5 });
        expect(await j.verify("s-child")).toMatchObject({ ok: true, records: 4 });
        const info = await j.getSession("s-child");
        expect(info).toMatchObject({
          parentUid: "s-parent",
          forkSeq: 3,
          fence: 1,
          lastSeq: 4,
          project: "p-fork",
          harness: "echo",
          computeState: "COLD",
        });
        expect((await j.head("s-parent")).seq).toBe(5);
        const next = await j.append("s-child", 4, 1, inputEvent("branch"));
        expect(next.seq).toBe(5);
        expect(next.contentHash).not.toBe(parentHashes[4]);
        expect((await j.verify("s-child")).ok).toBe(true);
      });

      it("forks at the head and refuses fork points outside 1..head, unknown parents and taken child uids", async () => {
        await parentOf5();
        await j.fork("s-parent", "s-at-head", 5, { uid: "s-at-head", project: "default", harness: "echo" });
        expect((await j.head("s-at-head")).seq).toBe(6);
        const meta = (uid: string) => ({ uid, project: "default", harness: "echo" });
        await expectHostError(j.fork("s-parent", "s-c0", 0, meta("s-c0")), ErrorCode.InvalidArgument);
        await expectHostError(j.fork("s-parent", "s-c6", 6, meta("s-c6")), ErrorCode.InvalidArgument);
        await expectHostError(j.fork("s-missing", "s-c1", 1, meta("s-c1")), ErrorCode.NotFound);
        await expectHostError(j.fork("s-parent", "s-at-head", 2, meta("s-at-head")), ErrorCode.AlreadyExists);
        for (const uid of ["s-c0", "s-c6", "s-c1"]) expect(await j.getSession(uid)).toBeUndefined();
        expect((await j.head("s-at-head")).seq).toBe(6);
      });
    });

    describe("forkAll", () => {
      async function parentOf3(): Promise<void> {
        await appendAll(j, "s-parent", [inputEvent("a"), outputEvent("b"), endEvent()]);
      }
      const meta = (uid: string) => ({ uid, project: "default", harness: "echo" });

      it("forkAllCreatesEveryChildWithItsCheckpointInOneTransaction", async () => {
        await parentOf3();
        const markers = await j.forkAll("s-parent", 3, [
          { meta: meta("s-a") },
          { meta: meta("s-b"), checkpointDigest: "sha256:bb" },
        ]);
        expect(markers.map((m) => m.seq)).toEqual([4, 4]);
        for (const uid of ["s-a", "s-b"]) expect(await j.verify(uid)).toMatchObject({ ok: true, records: 4 });
        expect(await j.latestCheckpoint("s-a")).toBeUndefined();
        expect(await j.latestCheckpoint("s-b")).toMatchObject({ seq: 4, digest: "sha256:bb" });
        expect((await j.latestCheckpoint("s-b"))?.contentHash).toBe(markers[1]?.contentHash);
        expect(await j.recordBytes("s-parent", 3)).toBeGreaterThan(0);
        expect(await j.recordBytes("s-parent", 3)).toBe(await j.recordBytes("s-a", 3));
        expect(await j.recordBytes("s-parent", 1)).toBeLessThan(await j.recordBytes("s-parent", 3));
        expect(await j.recordBytes("s-missing", 3)).toBe(0);
      });

      it("removeEmptySessionRemovesOnlyASessionWithoutRecords", async () => {
        await j.createSession(meta("s-empty"));
        await parentOf3();
        expect(await j.removeEmptySession("s-parent")).toBe(false);
        expect((await j.head("s-parent")).seq).toBe(3);
        expect(await j.removeEmptySession("s-empty")).toBe(true);
        expect(await j.getSession("s-empty")).toBeUndefined();
        expect(await j.removeEmptySession("s-empty")).toBe(false);
      });

      it("forkAllIsAllOrNothing: a child that cannot be created part-way leaves no child behind", async () => {
        await parentOf3();
        await j.createSession(meta("s-taken"));
        const children = ["s-c1", "s-c2", "s-taken", "s-c4"].map((uid) => ({ meta: meta(uid) }));
        await expectHostError(j.forkAll("s-parent", 3, children), ErrorCode.AlreadyExists);
        for (const uid of ["s-c1", "s-c2", "s-c4"]) expect(await j.getSession(uid)).toBeUndefined();
        expect(await j.head("s-taken")).toEqual({ seq: 0, hash: "" });
        await expectHostError(j.forkAll("s-parent", 9, [{ meta: meta("s-c9") }]), ErrorCode.InvalidArgument);
        expect(await j.getSession("s-c9")).toBeUndefined();
      });
    });

    describe("compute state", () => {
      it("follows the projection: approvals hold, SUSPEND/FORK cool, RESUME and turn events warm", async () => {
        await j.createSession({ uid: "s-cs", project: "default", harness: "echo" });
        const state = async () => (await j.getSession("s-cs"))?.computeState;
        expect(await state()).toBe("NONE");
        const steps: Array<[Event, string]> = [
          [approvalRequestEvent("c0"), "NONE"],
          [inputEvent("a"), "LIVE"],
          [lifecycleEvent(Lifecycle_Kind.LIFECYCLE_SUSPEND), "COLD"],
          [approvalResultEvent("c0", true), "COLD"],
          [lifecycleEvent(Lifecycle_Kind.LIFECYCLE_BASELINE), "COLD"],
          [lifecycleEvent(Lifecycle_Kind.LIFECYCLE_RESUME), "LIVE"],
          [approvalRequestEvent("c1"), "LIVE"],
          [lifecycleEvent(Lifecycle_Kind.LIFECYCLE_CANCEL), "LIVE"],
          [lifecycleEvent(Lifecycle_Kind.LIFECYCLE_FORK, "parent@1"), "COLD"],
          [endEvent(), "LIVE"],
        ];
        for (const [ev, want] of steps) {
          await appendAll(j, "s-cs", [ev]);
          expect(await state()).toBe(want);
        }
        const batch = await j.appendBatch("s-cs", steps.length, 0, [
          outputEvent("x"),
          lifecycleEvent(Lifecycle_Kind.LIFECYCLE_SUSPEND),
        ]);
        expect(batch).toHaveLength(2);
        expect(await state()).toBe("COLD");
      });
    });

    describe("pins", () => {
      // The session row's pin is the pin projection applied in the append transaction: what
      // SessionLog.pinnedVersion answers from the records, read back from the row and its index.
      const logPin = async (uid: string) => SessionLog.of(await j.readEvents(uid)).pinnedVersion;

      it("sessionRowPinFollowsThePinProjectionOnEveryWritePath", async () => {
        await j.createSession({ uid: "p-a", project: "default", harness: "ver" });
        expect((await j.getSession("p-a"))?.pin).toBeUndefined();
        await appendAll(j, "p-a", [inputEvent("no turn yet")]);
        expect((await j.getSession("p-a"))?.pin).toBeUndefined();
        await j.appendBatch("p-a", 1, 0, [executionStartEvent("ver", "1"), endEvent()]);
        expect((await j.getSession("p-a"))?.pin).toEqual({ harness: "ver", version: "1", digest: "", seq: 2 });
        await appendAll(j, "p-a", [lifecycleEvent(Lifecycle_Kind.LIFECYCLE_BASELINE, "not an upgrade")]);
        expect((await j.getSession("p-a"))?.pin?.version).toBe("1");
        const fenced = await j.appendUnderNewFence?.("p-a", 4, [upgradeRecordEvent("ver", "1", "2")]);
        if (fenced === undefined) await appendAll(j, "p-a", [upgradeRecordEvent("ver", "1", "2")]);
        expect((await j.getSession("p-a"))?.pin).toEqual({ harness: "ver", version: "2", digest: "", seq: 5 });
        expect((await j.getSession("p-a"))?.pin).toEqual(await logPin("p-a"));
        // A fork child inherits the pin of the records it copies: at the head, and below it.
        await j.fork("p-a", "p-head", 5, { uid: "p-head", project: "default", harness: "ver" });
        await j.fork("p-a", "p-low", 3, { uid: "p-low", project: "default", harness: "ver" });
        expect((await j.getSession("p-head"))?.pin?.version).toBe("2");
        expect((await j.getSession("p-low"))?.pin).toEqual({ harness: "ver", version: "1", digest: "", seq: 2 });
        expect((await j.getSession("p-low"))?.pin).toEqual(await logPin("p-low"));
        const [low] = await j.forkAll("p-a", 2, [{ meta: { uid: "p-all", project: "default", harness: "ver" } }]);
        expect(low?.seq).toBe(3);
        expect((await j.getSession("p-all"))?.pin?.version).toBe("1");
        // An import folds the records it brings.
        const records = await j.readRange("p-a");
        await j.importSession({ uid: "p-imp", project: "default", harness: "ver", createdAtMs: 1, fence: 2 }, records);
        expect((await j.getSession("p-imp"))?.pin).toEqual(await logPin("p-a"));
      });

      it("pinnedSessionsAnswersFromTheRowsByHarness", async () => {
        await appendAll(j, "q-1", [executionStartEvent("ver", "1", "x1")]);
        await appendAll(j, "q-2", [executionStartEvent("ver", `2+sha256:${"0f".repeat(32)}`, "x2")]);
        await appendAll(j, "q-0", [executionStartEvent("ver", "1", "x3"), upgradeRecordEvent("ver", "1", "2")]);
        await appendAll(j, "q-other", [executionStartEvent("other", "1", "x4")]);
        await appendAll(j, "q-none", [inputEvent("no turn")]);
        expect(await j.pinnedSessions("ver")).toEqual([
          { uid: "q-0", version: "2", digest: "" },
          { uid: "q-1", version: "1", digest: "" },
          { uid: "q-2", version: "2", digest: `sha256:${"0f".repeat(32)}` },
        ]);
        expect((await j.getSession("q-2"))?.pin).toEqual({
          harness: "ver",
          version: "2",
          digest: `sha256:${"0f".repeat(32)}`,
          seq: 1,
        });
        expect(await j.pinnedSessions("other")).toEqual([{ uid: "q-other", version: "1", digest: "" }]);
        expect(await j.pinnedSessions("missing")).toEqual([]);
        await j.deleteSession("q-1");
        expect((await j.pinnedSessions("ver")).map((p) => p.uid)).toEqual(["q-0", "q-2"]);
      });
    });

    describe("sessions", () => {
      it("creates, reads back every metadata field, and refuses a duplicate uid", async () => {
        const created = await j.createSession({
          uid: "s-meta",
          project: "p-meta",
          name: "my session",
          harness: "chat",
          model: "gpt-x",
          labels: { team: "core" },
          annotations: { note: "ünïcode" },
          origin: create(OriginSchema, { source: "cli", subject: "alice", uri: "file:///x", attributes: { k: "v" } }),
          identity: create(IdentityRefSchema, { principal: "user:alice", issuer: "local", subject: "alice" }),
        });
        const info = await j.getSession("s-meta");
        expect(info).toEqual(created);
        expect(info).toMatchObject({
          uid: "s-meta",
          project: "p-meta",
          name: "my session",
          harness: "chat",
          model: "gpt-x",
          parentUid: "",
          forkSeq: 0,
          labels: { team: "core" },
          annotations: { note: "ünïcode" },
          lastSeq: 0,
          lastHash: "",
          fence: 0,
          computeState: "NONE",
        });
        expect(info?.origin?.attributes).toEqual({ k: "v" });
        expect(info?.identity?.principal).toBe("user:alice");
        expect(info?.createdAtMs).toBeGreaterThan(0);
        await expectHostError(
          j.createSession({ uid: "s-meta", project: "p-meta", harness: "chat" }),
          ErrorCode.AlreadyExists,
        );
        expect(await j.getSession("s-none")).toBeUndefined();
        expect(await j.allSessionUids()).toContain("s-meta");
      });

      it("lists a project in keyset pages (created_at desc, uid asc) with opaque tokens", async () => {
        const uids = ["s-l3", "s-l1", "s-l5", "s-l2", "s-l4"];
        for (const uid of uids) await j.createSession({ uid, project: "p-list", harness: "echo" });
        await j.createSession({ uid: "s-elsewhere", project: "p-other", harness: "echo" });
        const seen: SessionInfo[] = [];
        const sizes: number[] = [];
        let token = "";
        do {
          const page = await j.listSessions({ project: "p-list", pageSize: 2, pageToken: token });
          sizes.push(page.sessions.length);
          seen.push(...page.sessions);
          token = page.nextPageToken;
          expect(token).not.toMatch(/[=+/]/);
        } while (token !== "");
        expect(sizes).toEqual([2, 2, 1]);
        expect(seen.map((s) => s.uid).sort()).toEqual([...uids].sort());
        const ordered = [...seen].sort((a, b) => b.createdAtMs - a.createdAtMs || (a.uid < b.uid ? -1 : 1));
        expect(seen.map((s) => s.uid)).toEqual(ordered.map((s) => s.uid));
        const all = await j.listSessions({ project: "p-list", pageSize: 0, pageToken: "" });
        expect(all.sessions).toHaveLength(5);
        expect(all.nextPageToken).toBe("");
        const big = await j.listSessions({ project: "p-list", pageSize: 10_000, pageToken: "" });
        expect(big.sessions).toHaveLength(5);
      });

      it("listSessionsFiltersByHarnessStateAndParentAcrossPages", async () => {
        // p-filter: 7 sessions of two harnesses in three compute states, two of them fork children.
        const make = async (uid: string, harness: string, events: Event[]) => {
          await j.createSession({ uid, project: "p-filter", harness });
          if (events.length > 0) await appendAll(j, uid, events);
        };
        await make("f-a1", "alpha", []);
        await make("f-a2", "alpha", [inputEvent("x")]);
        await make("f-b1", "beta", [inputEvent("x")]);
        await make("f-a3", "alpha", [inputEvent("x"), lifecycleEvent(Lifecycle_Kind.LIFECYCLE_SUSPEND)]);
        await make("f-b2", "beta", []);
        await j.fork("f-a2", "f-a2-c1", 1, { uid: "f-a2-c1", project: "p-filter", harness: "alpha" });
        await j.fork("f-a2", "f-a2-c2", 1, { uid: "f-a2-c2", project: "p-filter", harness: "alpha" });
        await j.createSession({ uid: "f-other", project: "p-elsewhere", harness: "alpha" });
        const all = (await j.listSessions({ project: "p-filter", pageSize: 100, pageToken: "" })).sessions;
        const pages = async (q: Omit<ListSessionsQuery, "pageSize" | "pageToken" | "project">) => {
          const seen: string[] = [];
          let token = "";
          do {
            const page = await j.listSessions({ ...q, project: "p-filter", pageSize: 2, pageToken: token });
            expect(page.sessions.length).toBeLessThanOrEqual(2);
            seen.push(...page.sessions.map((x) => x.uid));
            token = page.nextPageToken;
          } while (token !== "");
          return seen;
        };
        const expected = (keep: (x: SessionInfo) => boolean) => all.filter(keep).map((x) => x.uid);
        expect(await pages({ harness: "alpha" })).toEqual(expected((x) => x.harness === "alpha"));
        expect(await pages({ harness: "alpha" })).toHaveLength(5);
        expect(await pages({ computeStates: ["LIVE"] })).toEqual(expected((x) => x.computeState === "LIVE"));
        expect(await pages({ computeStates: ["NONE", "COLD"] })).toEqual(
          expected((x) => x.computeState === "NONE" || x.computeState === "COLD"),
        );
        expect(await pages({ harness: "beta", computeStates: ["LIVE"] })).toEqual(["f-b1"]);
        expect((await pages({ parentUid: "f-a2" })).sort()).toEqual(["f-a2-c1", "f-a2-c2"]);
        expect(await pages({ parentUid: "f-a2" })).toEqual(expected((x) => x.parentUid === "f-a2"));
        expect(await pages({ harness: "gamma" })).toEqual([]);
        expect(await pages({ harness: "", computeStates: [], parentUid: "" })).toEqual(all.map((x) => x.uid));
      });

      it("listSessionsRefusesAnUnknownComputeState", async () => {
        await expectHostError(
          j.listSessions({
            project: "default",
            pageSize: 10,
            pageToken: "",
            computeStates: ["SLEEPY" as ComputeStateName],
          }),
          ErrorCode.InvalidArgument,
        );
      });

      it("treats an empty project as default and refuses an unparseable token", async () => {
        await created(j, "s-default-list");
        await j.append("s-default-list", 0, 0, inputEvent("x"));
        const page = await j.listSessions({ project: "", pageSize: 0, pageToken: "" });
        expect(page.sessions.map((s) => s.uid)).toContain("s-default-list");
        for (const bad of ["!!!", "bm90LWEtY3Vyc29y", "a"]) {
          await expectHostError(
            j.listSessions({ project: "default", pageSize: 10, pageToken: bad }),
            ErrorCode.InvalidArgument,
          );
        }
      });
    });

    describe("registrations", () => {
      it("upserts, reads and lists by name", async () => {
        expect(await j.getRegistration("echo")).toBeUndefined();
        await j.putRegistration(registration("echo"));
        await j.putRegistration(registration("chat"));
        expect(await j.getRegistration("echo")).toEqual(registration("echo"));
        const retired = registration("echo", {
          state: "retired",
          retireReason: "replaced",
          retiredAtMs: 1_700_000_001_000,
          updatedAtMs: 1_700_000_001_000,
        });
        await j.putRegistration(retired);
        expect(await j.getRegistration("echo")).toEqual(retired);
        expect((await j.listRegistrations()).map((r) => r.name)).toEqual(["chat", "echo"]);
      });

      it("deleteRegistrationOnlyDeletesTheUidItRead: a freed name is gone, a newer registration is kept", async () => {
        await j.putRegistration(registration("typo"));
        expect(await j.deleteRegistration("typo", "harness-other")).toBe(false);
        expect(await j.getRegistration("typo")).toEqual(registration("typo"));
        expect(await j.deleteRegistration("typo", "harness-typo")).toBe(true);
        expect(await j.getRegistration("typo")).toBeUndefined();
        expect((await j.listRegistrations()).map((r) => r.name)).not.toContain("typo");
        expect(await j.deleteRegistration("typo", "harness-typo")).toBe(false);
        await j.putRegistration(registration("typo", { uid: "harness-again" }));
        expect((await j.getRegistration("typo"))?.uid).toBe("harness-again");
      });
    });

    describe("checkpoints", () => {
      it("upserts per (session, seq), returns the newest, and lists every digest", async () => {
        expect(await j.latestCheckpoint("s-ck")).toBeUndefined();
        const row = (seq: number, digest: string) => ({
          session: "s-ck",
          seq,
          contentHash: `h${seq}`,
          digest,
          createdAtMs: 1_700_000_000_000 + seq,
        });
        await j.putCheckpoint(row(5, "sha256:aa"));
        await j.putCheckpoint(row(9, "sha256:bb"));
        await j.putCheckpoint(row(3, "sha256:cc"));
        expect(await j.latestCheckpoint("s-ck")).toEqual(row(9, "sha256:bb"));
        await j.putCheckpoint(row(9, "sha256:dd"));
        expect(await j.latestCheckpoint("s-ck")).toEqual(row(9, "sha256:dd"));
        await j.putCheckpoint({ ...row(1, "sha256:aa"), session: "s-ck2" });
        expect([...(await j.checkpointDigests())].sort()).toEqual(["sha256:aa", "sha256:cc", "sha256:dd"]);
      });
    });

    describe("verified positions (docs/protocol.md §5.9)", () => {
      const position = (session: string, seq: number, bytes: number[]) => ({
        session,
        seq,
        hash: `h${seq}`,
        projection: new Uint8Array(bytes),
        digest: `sha256:${seq}`,
        createdAtMs: 1_700_000_000_000 + seq,
      });

      it("aVerifiedPositionIsStoredAsGivenAndOnlyMovesForward", async () => {
        expect(await j.verifiedPosition("s-vp")).toBeUndefined();
        await j.putVerifiedPosition(position("s-vp", 5, [1, 2, 3]));
        expect(await j.verifiedPosition("s-vp")).toEqual(position("s-vp", 5, [1, 2, 3]));
        await j.putVerifiedPosition(position("s-vp", 9, [9, 0, 255]));
        // A late write of an older (or the same) position changes nothing.
        await j.putVerifiedPosition(position("s-vp", 7, [7]));
        await j.putVerifiedPosition({ ...position("s-vp", 9, [4]), digest: "sha256:other" });
        expect(await j.verifiedPosition("s-vp")).toEqual(position("s-vp", 9, [9, 0, 255]));
        expect(await j.verifiedPosition("s-vp-other")).toBeUndefined();
      });

      it("aDeletedSessionTakesItsVerifiedPositionWithIt", async () => {
        await appendAll(j, "s-vp-del", [inputEvent("a"), outputEvent("b"), endEvent()]);
        await j.putVerifiedPosition(position("s-vp-del", 3, [1]));
        await j.putVerifiedPosition(position("s-vp-keep", 1, [2]));
        expect(await j.deleteSession("s-vp-del")).toBe(true);
        expect(await j.verifiedPosition("s-vp-del")).toBeUndefined();
        expect(await j.verifiedPosition("s-vp-keep")).toEqual(position("s-vp-keep", 1, [2]));
      });
    });

    describe("deleteSession", () => {
      it("deletedSessionIsGoneWithItsRecordsAndCheckpoints", async () => {
        await appendAll(j, "s-del", [inputEvent("a"), outputEvent("b"), endEvent()]);
        await j.putCheckpoint({ session: "s-del", seq: 3, contentHash: "h3", digest: "sha256:only", createdAtMs: 1 });
        await appendAll(j, "s-keep", [inputEvent("k")]);
        await j.putCheckpoint({ session: "s-keep", seq: 1, contentHash: "h1", digest: "sha256:kept", createdAtMs: 1 });
        expect(await j.deleteSession("s-del")).toBe(true);
        expect(await j.getSession("s-del")).toBeUndefined();
        expect(await j.readRange("s-del")).toEqual([]);
        expect(await j.head("s-del")).toEqual({ seq: 0, hash: "" });
        expect(await j.latestCheckpoint("s-del")).toBeUndefined();
        expect(await j.allSessionUids()).not.toContain("s-del");
        expect(await j.checkpointDigests()).toEqual(["sha256:kept"]);
        expect(
          (await j.listSessions({ project: "default", pageSize: 0, pageToken: "" })).sessions.map((s) => s.uid),
        ).toEqual(["s-keep"]);
        // The other session is untouched, and deleting twice (or an unknown uid) reports false.
        expect(await j.verify("s-keep")).toMatchObject({ ok: true, records: 1 });
        expect(await j.deleteSession("s-del")).toBe(false);
        expect(await j.deleteSession("s-never")).toBe(false);
      });

      it("forkChildVerifiesAfterItsParentIsDeleted", async () => {
        await appendAll(j, "s-parent", [inputEvent("a"), outputEvent("b"), endEvent()]);
        const meta = (uid: string) => ({ uid, project: "default", harness: "echo" });
        await j.forkAll("s-parent", 3, [{ meta: meta("s-kid"), checkpointDigest: "sha256:kid" }]);
        await j.fork("s-parent", "s-kid2", 2, meta("s-kid2"));
        expect(await j.deleteSession("s-parent")).toBe(true);
        expect(await j.verify("s-kid")).toMatchObject({ ok: true, records: 4 });
        expect(await j.verify("s-kid2")).toMatchObject({ ok: true, records: 3 });
        expect(await j.getSession("s-kid")).toMatchObject({ parentUid: "s-parent", forkSeq: 3, lastSeq: 4 });
        expect(await j.latestCheckpoint("s-kid")).toMatchObject({ seq: 4, digest: "sha256:kid" });
        // The child goes on: a new record chains on its own head.
        const next = await j.append("s-kid", 4, 1, inputEvent("more"));
        expect(next.seq).toBe(5);
        expect(await j.verify("s-kid")).toMatchObject({ ok: true, records: 5 });
      });

      // docs/protocol.md §18 rule 8: a deleted session stays deleted — no write brings it back.
      it("aDeletedSessionIsNeverRecreatedByAWrite", async () => {
        await appendAll(j, "s-gone", [inputEvent("a"), endEvent()]);
        const fence = await j.newFence("s-gone");
        expect(await j.deleteSession("s-gone")).toBe(true);
        await expectHostError(j.newFence("s-gone"), ErrorCode.NotFound);
        await expectHostError(j.append("s-gone", 0, fence, inputEvent("late")), ErrorCode.NotFound);
        await expectHostError(j.append("s-gone", 2, fence, inputEvent("late")), ErrorCode.NotFound);
        await expectHostError(j.appendBatch("s-gone", 2, fence, [inputEvent("x"), endEvent()]), ErrorCode.NotFound);
        await expectHostError(appendUnderNewFence(j, "s-gone", 0, [inputEvent("late")]), ErrorCode.NotFound);
        await expectHostError(appendUnderNewFence(j, "s-gone", 2, [inputEvent("late")]), ErrorCode.NotFound);
        expect(await j.getSession("s-gone")).toBeUndefined();
        expect(await j.allSessionUids()).not.toContain("s-gone");
        expect(await j.currentFence("s-gone")).toBe(0);
        expect(await j.readRange("s-gone")).toEqual([]);
      });

      it("a session recreated under a deleted uid starts empty (no record of the old one survives)", async () => {
        await appendAll(j, "s-again", [inputEvent("old"), endEvent()]);
        await j.deleteSession("s-again");
        await j.createSession({ uid: "s-again", project: "default", harness: "echo" });
        expect(await j.readRange("s-again")).toEqual([]);
        expect(await j.currentFence("s-again")).toBe(0);
        const rec = await j.append("s-again", 0, 0, inputEvent("new"));
        expect(rec.seq).toBe(1);
        expect(await j.verify("s-again")).toMatchObject({ ok: true, records: 1 });
      });
    });
  });
}
