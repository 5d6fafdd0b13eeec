// Sessions over real gRPC on loopback: every RPC's happy path and documented error codes, the Exec
// stream shape, single-writer semantics (concurrent Exec, expected_last_seq) and Replay/Fork fixes.
import { status as GrpcStatus } from "@grpc/grpc-js";
import { afterEach, describe, expect, it } from "vitest";
import { EventKind, Lifecycle_Kind, type LogRecord } from "../../src/gen/agentsessions/v1/common_pb.js";
import { toBinary } from "@bufbuild/protobuf";
import {
  ComputeState,
  ExecState,
  type ExecUpdate,
  ListSessionsResponseSchema,
} from "../../src/gen/agentsessions/v1/session_pb.js";
import { textOf } from "../../src/controller/events.js";
import { codeOf, drain, gatedEchoModel, startFixture, userInput, type Fixture } from "./helpers.js";

let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

async function fixture(opts?: Parameters<typeof startFixture>[0]): Promise<Fixture> {
  fx = await startFixture(opts);
  return fx;
}

function records(updates: readonly ExecUpdate[]): LogRecord[] {
  return updates.flatMap((u) => (u.update.case === "record" ? [u.update.value] : []));
}

function outputs(recs: readonly LogRecord[]): string[] {
  return recs.flatMap((r) =>
    r.event?.kind === EventKind.EVENT_OUTPUT && r.event.body.case === "message" ? [textOf(r.event.body.value)] : [],
  );
}

async function execTurn(f: Fixture, session: string, text: string): Promise<ExecUpdate[]> {
  const { items, error } = await drain(f.sessions.exec({ session, inputs: [userInput(text)] }));
  expect(error).toBeUndefined();
  return items;
}

describe("CreateSession / GetSession / ListSessions", () => {
  it("creates with defaults, gets it back and lists it", async () => {
    const f = await fixture();
    const created = await f.sessions.createSession({ session: { metadata: { name: "first" }, labels: { team: "a" } } });
    const uid = created.metadata?.uid ?? "";
    expect(uid).toMatch(/^sess-[0-9a-f]{24}$/);
    expect(created.harness).toBe("echo");
    expect(created.metadata?.project).toBe("default");
    expect(created.execState).toBe(ExecState.EXEC_PENDING);
    expect(created.lastSeq).toBe(0n);
    const got = await f.sessions.getSession({ uid });
    expect(got.metadata?.name).toBe("first");
    expect(got.labels).toEqual({ team: "a" });
    const page = await f.sessions.listSessions({});
    expect(page.sessions.map((s) => s.metadata?.uid)).toEqual([uid]);
  });

  it("pages with a keyset token and refuses a bad token", async () => {
    const f = await fixture();
    for (let i = 0; i < 3; i++) await f.sessions.createSession({});
    const first = await f.sessions.listSessions({ pageSize: 2 });
    expect(first.sessions).toHaveLength(2);
    expect(first.nextPageToken).not.toBe("");
    const second = await f.sessions.listSessions({ pageSize: 2, pageToken: first.nextPageToken });
    expect(second.sessions).toHaveLength(1);
    expect(second.nextPageToken).toBe("");
    expect(await codeOf(f.sessions.listSessions({ pageToken: "%%%not-a-token" }))).toBe(GrpcStatus.INVALID_ARGUMENT);
  });

  it("listPageIsBoundedByBytes: large sessions split a page, and paging neither skips nor repeats one", async () => {
    const budget = 64 * 1024;
    const f = await fixture({ config: { limits: { listPageBytes: budget } } });
    const note = "n".repeat(15 * 1024);
    const created = new Set<string>();
    for (let i = 0; i < 12; i++) {
      const s = await f.sessions.createSession({ session: { annotations: { note } } });
      created.add(s.metadata?.uid ?? "");
    }
    const seen: string[] = [];
    let token = "";
    let pages = 0;
    do {
      const page = await f.sessions.listSessions({ pageSize: 500, pageToken: token });
      expect(page.sessions.length).toBeGreaterThan(0);
      expect(toBinary(ListSessionsResponseSchema, page).length).toBeLessThanOrEqual(budget + 1024);
      seen.push(...page.sessions.map((s) => s.metadata?.uid ?? ""));
      token = page.nextPageToken;
      pages++;
    } while (token !== "" && pages < 20);
    expect(pages).toBeGreaterThan(1);
    expect(seen).toHaveLength(created.size);
    expect(new Set(seen)).toEqual(created);
  });

  it("answers the documented error codes", async () => {
    const f = await fixture();
    expect(await codeOf(f.sessions.createSession({ session: { harness: "nope" } }))).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(await codeOf(f.sessions.getSession({ uid: "" }))).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(await codeOf(f.sessions.getSession({ uid: "sess-000000000000000000000000" }))).toBe(GrpcStatus.NOT_FOUND);
    expect(await codeOf(f.sessions.deleteSession({ uid: "x" }))).toBe(GrpcStatus.NOT_FOUND);
    expect(await codeOf(f.sessions.cancel({ session: "x" }))).toBe(GrpcStatus.NOT_FOUND);
    expect((await f.sessions.listSessions({})).sessions).toHaveLength(0);
  });
});

describe("Exec", () => {
  it("streams the session first, then records in seq order and deltas, with the echo output", async () => {
    const f = await fixture();
    const { items, error } = await drain(f.sessions.exec({ inputs: [userInput("hi")] }));
    expect(error).toBeUndefined();
    expect(items[0]?.update.case).toBe("session");
    const uid = items[0]?.update.case === "session" ? (items[0].update.value.metadata?.uid ?? "") : "";
    expect(uid).toMatch(/^sess-/);
    const recs = records(items);
    expect(recs.map((r) => Number(r.seq))).toEqual(recs.map((_, i) => i + 1));
    expect(recs[0]?.event?.kind).toBe(EventKind.EVENT_EXECUTION_START);
    expect(recs.at(-1)?.event?.kind).toBe(EventKind.EVENT_END);
    expect(outputs(recs)).toEqual(["echo:hi"]);
    const deltas = items.flatMap((u) => (u.update.case === "delta" ? [u.update.value] : []));
    expect(deltas.map((d) => d.chunk).join("")).toBe("echo:hi");
    expect(deltas.at(-1)?.done).toBe(true);
    // docs/protocol.md §5.4: the last chunk carries done itself (echo answers in one chunk).
    expect(deltas).toHaveLength(1);
    const after = await f.sessions.getSession({ uid });
    expect(after.lastSeq).toBe(recs.at(-1)?.seq);
    expect(after.execState).toBe(ExecState.EXEC_COMPLETED);
    expect(after.computeState).toBe(ComputeState.COMPUTE_LIVE);
    expect((await f.host.journal.verify(uid)).ok).toBe(true);
  });

  it("refuses an unknown harness and an unknown session before streaming", async () => {
    const f = await fixture();
    const unknownHarness = await drain(f.sessions.exec({ harness: "nope", inputs: [userInput("x")] }));
    expect(unknownHarness.error?.grpcCode).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(unknownHarness.items).toHaveLength(0);
    const unknownSession = await drain(
      f.sessions.exec({ session: "sess-000000000000000000000000", inputs: [userInput("x")] }),
    );
    expect(unknownSession.error?.grpcCode).toBe(GrpcStatus.NOT_FOUND);
    expect((await f.sessions.listSessions({})).sessions).toHaveLength(0);
  });

  it("expected_last_seq mismatch is ABORTED after the session frame and writes nothing", async () => {
    const f = await fixture();
    const first = await execTurn(f, "", "one");
    const uid = first[0]?.update.case === "session" ? (first[0].update.value.metadata?.uid ?? "") : "";
    const head = await f.host.journal.head(uid);
    const { items, error } = await drain(
      f.sessions.exec({ session: uid, inputs: [userInput("two")], expectedLastSeq: BigInt(head.seq - 1) }),
    );
    expect(error?.grpcCode).toBe(GrpcStatus.ABORTED);
    expect(items.map((u) => u.update.case)).toEqual(["session"]);
    expect(await f.host.journal.head(uid)).toEqual(head);
    // The matching value (explicit presence) proceeds.
    const ok = await drain(
      f.sessions.exec({ session: uid, inputs: [userInput("two")], expectedLastSeq: BigInt(head.seq) }),
    );
    expect(ok.error).toBeUndefined();
    expect(outputs(records(ok.items))).toEqual(["echo:two"]);
  });

  it("concurrent Exec on one session: exactly one proceeds, the rest are ABORTED, the chain verifies", async () => {
    const gate = gatedEchoModel();
    const f = await fixture({ overrides: { model: gate.model } });
    const uid = (await f.sessions.createSession({})).metadata?.uid ?? "";
    const winner = drain(f.sessions.exec({ session: uid, inputs: [userInput("first")] }));
    await gate.entered; // the first turn holds the session now
    const losers = await Promise.all(
      [0, 1, 2].map((i) => drain(f.sessions.exec({ session: uid, inputs: [userInput(`other-${i}`)] }))),
    );
    for (const l of losers) {
      expect(l.error?.grpcCode).toBe(GrpcStatus.ABORTED);
      expect(records(l.items)).toHaveLength(0);
    }
    gate.release();
    const won = await winner;
    expect(won.error).toBeUndefined();
    expect(outputs(records(won.items))).toEqual(["echo:first"]);
    const verified = await f.host.journal.verify(uid);
    expect(verified.ok).toBe(true);
    expect(Number((await f.sessions.getSession({ uid })).lastSeq)).toBe(records(won.items).length);
  });

  it("a client cancel aborts the turn and frees the session", async () => {
    const gate = gatedEchoModel();
    const f = await fixture({ overrides: { model: gate.model } });
    const uid = (await f.sessions.createSession({})).metadata?.uid ?? "";
    const abort = new AbortController();
    const cut = drain(f.sessions.exec({ session: uid, inputs: [userInput("cut")] }, { signal: abort.signal })).catch(
      (err: unknown) => err,
    );
    await gate.entered;
    abort.abort();
    await cut;
    // The guard is released once the aborted turn settles: poll with a deadline instead of sleeping.
    const deadline = Date.now() + 20_000;
    while (f.host.placer.guard.isBusy(uid)) {
      if (Date.now() > deadline) throw new Error("session still busy after cancel");
      await new Promise((r) => setImmediate(r));
    }
    gate.release();
    expect((await f.host.journal.verify(uid)).ok).toBe(true);
  });

  it("a past deadline_unix is DEADLINE_EXCEEDED and creates nothing", async () => {
    const f = await fixture();
    const { error } = await drain(f.sessions.exec({ inputs: [userInput("late")], deadlineUnix: 1n }));
    expect(error?.grpcCode).toBe(GrpcStatus.DEADLINE_EXCEEDED);
    expect((await f.sessions.listSessions({})).sessions).toHaveLength(0);
  });
});

describe("deadlines and shutdown", () => {
  it("deadline_unix cancels a turn that outlives it with DEADLINE_EXCEEDED", async () => {
    const gate = gatedEchoModel(); // never released: only the deadline can end the turn
    const f = await fixture({ overrides: { model: gate.model } });
    const deadlineUnix = BigInt(Math.floor(Date.now() / 1000) + 2);
    const { items, error } = await drain(f.sessions.exec({ inputs: [userInput("slow")], deadlineUnix }));
    expect(error?.grpcCode).toBe(GrpcStatus.DEADLINE_EXCEEDED);
    expect(items[0]?.update.case).toBe("session");
    const uid = items[0]?.update.case === "session" ? (items[0].update.value.metadata?.uid ?? "") : "";
    expect(f.host.placer.guard.isBusy(uid)).toBe(false);
    expect((await f.host.journal.verify(uid)).ok).toBe(true);
  });

  it("close() lets an in-flight Exec finish within the grace period", async () => {
    const gate = gatedEchoModel();
    const f = await fixture({ overrides: { model: gate.model } });
    const inflight = drain(f.sessions.exec({ inputs: [userInput("last")] }));
    await gate.entered;
    const closed = f.server.close(60_000);
    gate.release();
    const { items, error } = await inflight;
    await closed;
    expect(error).toBeUndefined();
    expect(outputs(records(items))).toEqual(["echo:last"]);
  });
});

describe("Replay", () => {
  it("streams stored records in a range; an unknown session is NOT_FOUND", async () => {
    const f = await fixture();
    const items = await execTurn(f, "", "a");
    const uid = items[0]?.update.case === "session" ? (items[0].update.value.metadata?.uid ?? "") : "";
    const live = records(items);
    const all = await drain(f.sessions.replay({ session: uid }));
    expect(all.error).toBeUndefined();
    expect(all.items.map((r) => r.contentHash)).toEqual(live.map((r) => r.contentHash));
    const middle = await drain(f.sessions.replay({ session: uid, fromSeq: 2n, toSeq: 3n }));
    expect(middle.items.map((r) => Number(r.seq))).toEqual([2, 3]);
    const missing = await drain(f.sessions.replay({ session: "sess-000000000000000000000000" }));
    expect(missing.error?.grpcCode).toBe(GrpcStatus.NOT_FOUND);
    expect((await drain(f.sessions.replay({ session: "" }))).error?.grpcCode).toBe(GrpcStatus.INVALID_ARGUMENT);
  });
});

describe("Fork, Suspend, Resume", () => {
  it("forks children that inherit the parent's metadata and take labels and names from the request", async () => {
    const f = await fixture();
    const parent = await f.sessions.createSession({
      session: { model: "m1", annotations: { a: "1" }, labels: { keep: "no" } },
    });
    const uid = parent.metadata?.uid ?? "";
    await execTurn(f, uid, "x");
    const res = await f.sessions.fork({
      session: uid,
      count: 2,
      labels: { branch: "b" },
      childNames: ["left", "right"],
    });
    expect(res.children.map((c) => c.metadata?.name)).toEqual(["left", "right"]);
    for (const c of res.children) {
      expect(c.parentUid).toBe(uid);
      expect(c.harness).toBe("echo");
      expect(c.model).toBe("m1");
      expect(c.annotations).toEqual({ a: "1" });
      expect(c.labels).toEqual({ branch: "b" });
      expect((await f.host.journal.verify(c.metadata?.uid ?? "")).ok).toBe(true);
    }
  });

  it("Fork with count 0 makes one child, as the Go client's default expects", async () => {
    const f = await fixture();
    const uid = (await f.sessions.createSession({})).metadata?.uid ?? "";
    await execTurn(f, uid, "x");
    const res = await f.sessions.fork({ session: uid });
    expect(res.children).toHaveLength(1);
    expect(res.children[0]?.parentUid).toBe(uid);
    expect((await f.sessions.listSessions({})).sessions).toHaveLength(2);
  });

  it("refuses count -1 and 129, identity, mismatched child_names and unknown parents, changing nothing", async () => {
    const f = await fixture();
    const uid = (await f.sessions.createSession({})).metadata?.uid ?? "";
    await execTurn(f, uid, "x");
    expect(await codeOf(f.sessions.fork({ session: uid, count: -1 }))).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(await codeOf(f.sessions.fork({ session: uid, count: 129 }))).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(await codeOf(f.sessions.fork({ session: uid, count: 1, identity: {} }))).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(await codeOf(f.sessions.fork({ session: uid, count: 2, childNames: ["only-one"] }))).toBe(
      GrpcStatus.INVALID_ARGUMENT,
    );
    expect(await codeOf(f.sessions.fork({ session: "sess-000000000000000000000000", count: 1 }))).toBe(
      GrpcStatus.NOT_FOUND,
    );
    expect((await f.sessions.listSessions({})).sessions).toHaveLength(1);
  });

  it("suspends and resumes, returning the re-read session", async () => {
    const f = await fixture();
    const uid = (await f.sessions.createSession({})).metadata?.uid ?? "";
    await execTurn(f, uid, "x");
    const suspended = await f.sessions.suspend({ session: uid });
    expect(suspended.computeState).toBe(ComputeState.COMPUTE_COLD);
    const resumed = await f.sessions.resume({ session: uid });
    expect(resumed.computeState).toBe(ComputeState.COMPUTE_LIVE);
    expect(resumed.lastSeq).toBe(suspended.lastSeq + 1n);
    const tail = await drain(f.sessions.replay({ session: uid, fromSeq: suspended.lastSeq }));
    expect(tail.items.map((r) => (r.event?.body.case === "lifecycle" ? r.event.body.value.kind : undefined))).toEqual([
      Lifecycle_Kind.LIFECYCLE_SUSPEND,
      Lifecycle_Kind.LIFECYCLE_RESUME,
    ]);
    expect(await codeOf(f.sessions.suspend({ session: "" }))).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(await codeOf(f.sessions.resume({ session: "sess-000000000000000000000000" }))).toBe(GrpcStatus.NOT_FOUND);
  });
});
