// docs/protocol.md §8.8: incremental history. A host sends only the tail of a session's history to a
// node that negotiated it, the node rebuilds the full history from its cache, and the harness always
// sees exactly what a full send carries; any mismatch is refused before the turn runs and resent in full.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { Metadata, status as GrpcStatus } from "@grpc/grpc-js";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { EventKind, EventSchema, Mediation } from "../../src/gen/agentsessions/v1/common_pb.js";
import type { Event, ToolCall, ToolResult } from "../../src/gen/agentsessions/v1/common_pb.js";
import { HarnessDescriptorSchema, Harness as HarnessService } from "../../src/gen/agentsessions/v1/harness_pb.js";
import { ApprovalParkedError } from "../../src/controller/approvals.js";
import { ErrorCode, HostError, isHostError } from "../../src/errors/index.js";
import { ActorsClient, HistoryStore, RemoteHarness, serveHarness } from "../../src/node/index.js";
import type { HarnessNode, ServeHarnessOptions } from "../../src/node/index.js";
import {
  HISTORY_BASE_HEADER,
  HISTORY_TOKEN_HEADER,
  historyRequestOf,
  isStaleHistory,
} from "../../src/node/history-headers.js";
import type { EventSink, Harness, StartInfo } from "../../src/harness/types.js";
import { RpcError, createClient } from "../../src/wire/index.js";
import { RecordingSink, failureOf, startInfo, textMessage } from "./fixtures.js";

const dir = mkdtempSync(join(tmpdir(), "hh-inchist-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A stateless harness that keeps a copy of every history it was handed (by session). */
class HistoryProbe implements Harness {
  static readonly seen = new Map<string, Event[][]>();
  static runs = 0;

  describe() {
    return create(HarnessDescriptorSchema, { id: "probe", version: "1" });
  }

  async run(start: StartInfo, sink: EventSink, signal: AbortSignal): Promise<void> {
    HistoryProbe.runs += 1;
    const list = HistoryProbe.seen.get(start.sessionUid) ?? [];
    list.push([...start.history]);
    HistoryProbe.seen.set(start.sessionUid, list);
    const first = start.inputs[0]?.parts[0]?.part;
    const command = first?.case === "text" ? first.value.text : "";
    if (command === "fail") throw new HostError(ErrorCode.FailedPrecondition, "probe: asked to fail");
    if (command === "wait") {
      await sink.output("waiting", signal);
      await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
      throw new HostError(ErrorCode.Cancelled, "probe saw the abort");
    }
    if (command === "gate") {
      await sink.toolCall(
        {
          $typeName: "agentsessions.v1.ToolCall",
          id: "t-gate",
          tool: "deploy",
          mediation: Mediation.REQUIRES_APPROVAL,
          idempotencyKey: "k",
        } as ToolCall,
        signal,
      );
    }
    await sink.output(`history=${start.history.length}`, signal);
  }

  /** The last history the session's harness saw. */
  static last(session: string): Event[] | undefined {
    return HistoryProbe.seen.get(session)?.at(-1);
  }
}

/** A session's journal stand-in: an append-only list of events, `n` per turn. */
class FakeJournal {
  readonly events: Event[] = [];
  append(n: number, tag: string): void {
    for (let i = 0; i < n; i++) {
      this.events.push(
        create(EventSchema, {
          executionId: tag,
          kind: EventKind.EVENT_OUTPUT,
          body: { case: "message", value: textMessage(`${tag}#${this.events.length}`, "assistant") },
        }),
      );
    }
  }
  /** A copy (histories are handed over as fresh arrays, like HistoryCache re-reads). */
  snapshot(): Event[] {
    return [...this.events];
  }
}

const nodes: HarnessNode[] = [];
const remotes: RemoteHarness[] = [];
const clients: ActorsClient[] = [];
let sockets = 0;

async function node(
  opts: Partial<ServeHarnessOptions> = {},
  socket = join(dir, `n${++sockets}.sock`),
): Promise<HarnessNode> {
  const n = await serveHarness(() => new HistoryProbe(), { listen: `unix://${socket}`, ...opts });
  nodes.push(n);
  return n;
}

function remote(address: string, session: string, incrementalHistory = true): RemoteHarness {
  const r = new RemoteHarness({ address, session, incrementalHistory });
  remotes.push(r);
  return r;
}

let execs = 0;
function execId(): string {
  return (++execs).toString(16).padStart(16, "0");
}

/** One turn with the given history; resolves to the sink's outputs. */
async function turn(r: RemoteHarness, history: readonly Event[], command = "go"): Promise<string[]> {
  const sink = new RecordingSink();
  await r.run(startInfo(execId(), command, { sessionUid: r.session, history }), sink, new AbortController().signal);
  return sink.outputs();
}

function expectSameHistory(seen: readonly Event[] | undefined, expected: readonly Event[]): void {
  expect(seen?.length).toBe(expected.length);
  for (const [i, e] of (seen ?? []).entries()) expect(e).toEqual(expected[i]);
}

afterEach(async () => {
  for (const r of remotes.splice(0)) r.close();
  for (const c of clients.splice(0)) c.close();
  await Promise.all(nodes.splice(0).map((n) => n.close()));
});

describe("incremental history (docs/protocol.md §8.8)", () => {
  it("an SDK node reports incremental_history true; without a cache it reports false; without Actors NodeInfo is UNIMPLEMENTED", async () => {
    const withCache = await node();
    const noCache = await node({ historyCache: false });
    const noActors = await node({ actors: false });
    const a = new ActorsClient({ address: withCache.address });
    const b = new ActorsClient({ address: noCache.address });
    const c = new ActorsClient({ address: noActors.address });
    clients.push(a, b, c);
    expect((await a.nodeInfo()).incrementalHistory).toBe(true);
    expect((await b.nodeInfo()).incrementalHistory).toBe(false);
    const err = await failureOf(c.nodeInfo());
    expect(err instanceof RpcError && err.grpcCode).toBe(GrpcStatus.UNIMPLEMENTED);
  });

  it("over 5 turns the harness sees exactly the full history while every Start after the first carries only the tail", async () => {
    const n = await node();
    const r = remote(n.address, "s-five");
    const journal = new FakeJournal();
    let fullSizes = 0;
    const tails: number[] = [];
    journal.append(2, "created");
    for (let t = 0; t < 5; t++) {
      const before = r.historyStats.eventsSent;
      const history = journal.snapshot();
      expect(await turn(r, history)).toEqual([`history=${history.length}`]);
      expectSameHistory(HistoryProbe.last("s-five"), history);
      tails.push(r.historyStats.eventsSent - before);
      fullSizes += history.length;
      journal.append(5, `turn${t}`);
    }
    // The first Start carried the whole history (2 events), each later one only the 5 new events.
    expect(tails).toEqual([2, 5, 5, 5, 5]);
    expect(r.historyStats).toEqual({ starts: 5, tails: 4, eventsSent: 22, resends: 0, uploads: 0 });
    expect(fullSizes).toBe(2 + 7 + 12 + 17 + 22);
  });

  it("a node that restarted holds nothing: the tail is refused, resent in full, and the turn succeeds with the right history", async () => {
    const socket = join(dir, "restart.sock");
    const first = await node({}, socket);
    const r = remote(first.address, "s-restart");
    const journal = new FakeJournal();
    journal.append(3, "a");
    await turn(r, journal.snapshot());
    journal.append(4, "b");
    await first.close();
    await node({}, socket);
    const runsBefore = HistoryProbe.runs;
    const history = journal.snapshot();
    expect(await turn(r, history)).toEqual([`history=${history.length}`]);
    expectSameHistory(HistoryProbe.last("s-restart"), history);
    // The refused tail ran nothing: exactly one run for the turn.
    expect(HistoryProbe.runs - runsBefore).toBe(1);
    expect(r.historyStats).toMatchObject({ starts: 3, tails: 1, resends: 1, eventsSent: 3 + 4 + 7 });
    // And the node holds the resent history: the next Start is a tail again.
    journal.append(2, "c");
    await turn(r, journal.snapshot());
    expect(r.historyStats).toMatchObject({ tails: 2, resends: 1 });
    expectSameHistory(HistoryProbe.last("s-restart"), journal.events);
  });

  it("a session evicted from the node's cache (LRU bound) is resent in full; the harness history stays exact", async () => {
    const n = await node({ historyCache: { maxSessions: 1 } });
    const a = remote(n.address, "s-evict-a");
    const b = remote(n.address, "s-evict-b");
    const ja = new FakeJournal();
    const jb = new FakeJournal();
    ja.append(3, "a");
    jb.append(4, "b");
    await turn(a, ja.snapshot());
    await turn(b, jb.snapshot()); // evicts a
    ja.append(2, "a2");
    await turn(a, ja.snapshot());
    expectSameHistory(HistoryProbe.last("s-evict-a"), ja.events);
    expect(a.historyStats.resends).toBe(1);
  });

  it("two hosts alternately driving one session never make the node use the other host's history (tokens)", async () => {
    const n = await node();
    const hostA = remote(n.address, "s-two-hosts");
    const hostB = remote(n.address, "s-two-hosts");
    // Two different histories of the same length: only the token can tell the node which one a tail extends.
    const ja = new FakeJournal();
    const jb = new FakeJournal();
    ja.append(4, "A");
    jb.append(4, "B");
    await turn(hostA, ja.snapshot());
    await turn(hostB, jb.snapshot());
    ja.append(3, "A2");
    await turn(hostA, ja.snapshot());
    expectSameHistory(HistoryProbe.last("s-two-hosts"), ja.events);
    jb.append(3, "B2");
    await turn(hostB, jb.snapshot());
    expectSameHistory(HistoryProbe.last("s-two-hosts"), jb.events);
    expect(hostA.historyStats.resends).toBe(1);
    expect(hostB.historyStats.resends).toBe(1);
    // The same host again: its own hold is current, so a plain tail.
    jb.append(1, "B3");
    await turn(hostB, jb.snapshot());
    expectSameHistory(HistoryProbe.last("s-two-hosts"), jb.events);
    expect(hostB.historyStats).toMatchObject({ tails: 2, resends: 1 });
  });

  it("a failed turn makes the next Start full", async () => {
    const n = await node();
    const r = remote(n.address, "s-failed");
    const journal = new FakeJournal();
    journal.append(3, "a");
    await turn(r, journal.snapshot());
    journal.append(2, "b");
    expect(await failureOf(turn(r, journal.snapshot(), "fail"))).toBeInstanceOf(HostError);
    journal.append(2, "c");
    const before = r.historyStats;
    await turn(r, journal.snapshot());
    const after = r.historyStats;
    expect(after.tails).toBe(before.tails);
    expect(after.eventsSent - before.eventsSent).toBe(journal.events.length);
    expectSameHistory(HistoryProbe.last("s-failed"), journal.events);
  });

  it("a cancelled turn and a parked turn make the next Start full", async () => {
    const n = await node();
    const r = remote(n.address, "s-cancel-park");
    const journal = new FakeJournal();
    journal.append(3, "a");
    await turn(r, journal.snapshot());

    journal.append(1, "b");
    const sink = new RecordingSink();
    const abort = new AbortController();
    const cut = r.run(
      startInfo(execId(), "wait", { sessionUid: r.session, history: journal.snapshot() }),
      sink,
      abort.signal,
    );
    await sink.outputSeen("waiting");
    abort.abort(new HostError(ErrorCode.Cancelled, "test cancels"));
    expect(isHostError(await failureOf(cut), ErrorCode.Cancelled)).toBe(true);
    let before = r.historyStats;
    journal.append(1, "c");
    await waitIdle(r, journal);
    expect(r.historyStats.tails).toBe(before.tails);

    journal.append(1, "d");
    const gated = execId();
    const parked = await failureOf(
      r.run(
        startInfo(gated, "gate", { sessionUid: r.session, history: journal.snapshot() }),
        new ParkingSink(gated),
        new AbortController().signal,
      ),
    );
    expect(parked).toBeInstanceOf(ApprovalParkedError);
    before = r.historyStats;
    journal.append(1, "e");
    await turn(r, journal.snapshot());
    expect(r.historyStats.tails).toBe(before.tails);
    expectSameHistory(HistoryProbe.last("s-cancel-park"), journal.events);
  });

  it("DropActor and RestoreActor forget the node's history for that session; the host's next tail is resent in full", async () => {
    const n = await node();
    const actors = new ActorsClient({ address: n.address });
    clients.push(actors);
    const r = remote(n.address, "s-drop");
    const journal = new FakeJournal();
    journal.append(3, "a");
    await turn(r, journal.snapshot());
    const bytes = await actors.snapshot("s-drop");
    expect(await actors.drop("s-drop")).toBe(true);
    journal.append(2, "b");
    await turn(r, journal.snapshot());
    expect(r.historyStats.resends).toBe(1);
    expectSameHistory(HistoryProbe.last("s-drop"), journal.events);

    await actors.restore("s-drop", bytes, { replace: true });
    journal.append(2, "c");
    await turn(r, journal.snapshot());
    expect(r.historyStats.resends).toBe(2);
    expectSameHistory(HistoryProbe.last("s-drop"), journal.events);
  });

  /** Three growing turns on `r`: the harness sees each whole history, and every Start carried all of it. */
  async function expectFullHistoriesOnly(r: ReturnType<typeof remote>, session: string): Promise<void> {
    const journal = new FakeJournal();
    let total = 0;
    for (let t = 0; t < 3; t++) {
      journal.append(2, `t${t}`);
      total += journal.events.length;
      await turn(r, journal.snapshot());
      expectSameHistory(HistoryProbe.last(session), journal.events);
    }
    expect(r.historyStats).toEqual({ starts: 3, tails: 0, eventsSent: total, resends: 0, uploads: 0 });
  }

  it("memory actors (history []) get plain Starts: no history metadata, nothing held, nothing sent", async () => {
    const n = await node();
    const r = remote(n.address, "s-memory");
    for (let t = 0; t < 3; t++) await turn(r, []);
    expect(r.historyStats).toEqual({ starts: 3, tails: 0, eventsSent: 0, resends: 0, uploads: 0 });
    expect(HistoryProbe.seen.get("s-memory")).toEqual([[], [], []]);
  });

  it("a node that keeps no history never confirms a hold: every Start is full and none is refused", async () => {
    const n = await node({ historyCache: false });
    const r = remote(n.address, "s-nocache"); // told (wrongly) that the node negotiated it
    await expectFullHistoriesOnly(r, "s-nocache");
  });

  it("a host that did not negotiate sends full histories without history metadata", async () => {
    const n = await node({ actors: false });
    const r = remote(n.address, "s-reference", false);
    await expectFullHistoriesOnly(r, "s-reference");
  });

  it("the node refuses a tail it cannot extend with FAILED_PRECONDITION and the stale marker, before running the harness", async () => {
    const n = await node();
    const runsBefore = HistoryProbe.runs;
    const err = await rawStart(n.address, "s-raw", {
      [HISTORY_TOKEN_HEADER]: "ab".repeat(16),
      [HISTORY_BASE_HEADER]: "3",
    });
    expect(err instanceof RpcError && err.grpcCode).toBe(GrpcStatus.FAILED_PRECONDITION);
    expect(isStaleHistory(err)).toBe(true);
    expect(HistoryProbe.runs).toBe(runsBefore);
    expect(HistoryProbe.seen.get("s-raw")).toBeUndefined();
  });

  it("malformed history metadata is refused with INVALID_ARGUMENT", async () => {
    const n = await node();
    const malformed: Record<string, string>[] = [
      { [HISTORY_TOKEN_HEADER]: "not-hex" },
      { [HISTORY_BASE_HEADER]: "3" },
      { [HISTORY_TOKEN_HEADER]: "ab".repeat(16), [HISTORY_BASE_HEADER]: "-1" },
    ];
    for (const md of malformed) {
      const err = await rawStart(n.address, "s-malformed", md);
      expect(err instanceof RpcError && err.grpcCode, JSON.stringify(md)).toBe(GrpcStatus.INVALID_ARGUMENT);
    }
    const parse = (entries: Record<string, string>) => {
      const md = new Metadata();
      for (const [k, v] of Object.entries(entries)) md.set(k, v);
      return historyRequestOf(md);
    };
    expect(parse({})).toEqual({ kind: "none" });
    expect(parse({ [HISTORY_TOKEN_HEADER]: "0f".repeat(16), [HISTORY_BASE_HEADER]: "12" })).toEqual({
      kind: "tail",
      token: "0f".repeat(16),
      base: 12,
    });
  });
});

describe("the node's history cache is bounded (docs/protocol.md §8.8)", () => {
  const events = (n: number): Event[] => {
    const j = new FakeJournal();
    j.append(n, "x");
    return j.events;
  };
  const tok = (c: string): string => c.repeat(32);

  it("keeps at most maxSessions sessions, evicting the least recently used", () => {
    const store = new HistoryStore({ maxSessions: 2, maxEvents: 1000 });
    const md = new Metadata();
    store.resolve("a", events(1), { kind: "full", token: tok("a") }, md);
    store.resolve("b", events(1), { kind: "full", token: tok("b") }, md);
    store.resolve("a", events(1), { kind: "tail", token: tok("a"), base: 1 }, md); // a is now most recent
    store.resolve("c", events(1), { kind: "full", token: tok("c") }, md); // evicts b
    expect(store.size).toBe(2);
    expect(() => store.resolve("b", [], { kind: "tail", token: tok("b"), base: 1 }, md)).toThrow(/history-stale/);
    expect(store.resolve("a", events(1), { kind: "tail", token: tok("a"), base: 2 }, md).held).toBe(3);
  });

  it("keeps at most maxEvents events in total; a session longer than that is not held", () => {
    const store = new HistoryStore({ maxSessions: 10, maxEvents: 10 });
    const md = new Metadata();
    store.resolve("a", events(6), { kind: "full", token: tok("a") }, md);
    store.resolve("b", events(6), { kind: "full", token: tok("b") }, md); // evicts a
    expect(store.totalEvents).toBe(6);
    expect(store.size).toBe(1);
    const long = store.resolve("c", events(11), { kind: "full", token: tok("c") }, md);
    expect(long.held).toBe(0);
    expect(long.history).toHaveLength(11);
    // Growing past the bound by a tail drops the entry (the turn still gets its full history).
    const grown = store.resolve("b", events(5), { kind: "tail", token: tok("b"), base: 6 }, md);
    expect(grown).toMatchObject({ held: 0 });
    expect(grown.history).toHaveLength(11);
    expect(store.totalEvents).toBe(0);
  });

  it("a refused tail changes nothing", () => {
    const store = new HistoryStore();
    const md = new Metadata();
    store.resolve("a", events(3), { kind: "full", token: tok("a") }, md);
    expect(() => store.resolve("a", events(1), { kind: "tail", token: tok("a"), base: 2 }, md)).toThrow(
      /history-stale/,
    );
    expect(() => store.resolve("a", events(1), { kind: "tail", token: tok("b"), base: 3 }, md)).toThrow(
      /history-stale/,
    );
    expect(store.totalEvents).toBe(3);
    expect(store.resolve("a", events(1), { kind: "tail", token: tok("a"), base: 3 }, md).held).toBe(4);
  });
});

/** Runs one turn after a cancel: the node may still be unwinding the cancelled turn (ABORTED). */
async function waitIdle(r: RemoteHarness, journal: FakeJournal): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      await turn(r, journal.snapshot());
      return;
    } catch (err) {
      if (!isHostError(err, ErrorCode.SessionBusy) || Date.now() > deadline) throw err;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
}

/** Parks every gated tool call, as the host does for an approval gate. */
class ParkingSink extends RecordingSink {
  constructor(private readonly executionId: string) {
    super();
  }
  override async toolCall(call: ToolCall): Promise<ToolResult> {
    throw new ApprovalParkedError({ executionId: this.executionId, toolCallId: call.id, requestSeq: 1 });
  }
}

/** A Connect call with the given metadata and an empty Start; resolves to the error it ends with. */
async function rawStart(address: string, session: string, metadata: Record<string, string>): Promise<unknown> {
  const client = createClient(HarnessService, address, { metadata });
  try {
    const call = client.connect();
    await call.send({ session, executionId: execId(), frame: { case: "start", value: {} } });
    call.end();
    try {
      for await (const ev of call) void ev;
    } catch (err) {
      return err;
    }
    throw new Error("expected the node to refuse the stream");
  } finally {
    client.close();
  }
}
