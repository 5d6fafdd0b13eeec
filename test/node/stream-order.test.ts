// docs/protocol.md §4.6 item 9: RemoteHarness.run() returns at END, and the session's next node call
// (the next Start, or an Actors call about the session) reaches the node only after the previous
// stream ended — the node's status, or the host's cancel once END_CLOSE_WAIT_MS passed. The test node
// records, in order, each Start it receives, each stream's end, and each DropActor, and answers a Start
// for a session whose stream is still open with SESSION_BUSY, as a reference node does.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { Server } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventKind } from "../../src/gen/agentsessions/v1/common_pb.js";
import type { EventSchema } from "../../src/gen/agentsessions/v1/common_pb.js";
import { Harness as HarnessService } from "../../src/gen/agentsessions/v1/harness_pb.js";
import type { ControllerFrame } from "../../src/gen/agentsessions/v1/harness_pb.js";
import { Actors } from "../../src/gen/harnesshost/v1/actors_pb.js";
import { ActorsClient, RemoteHarness } from "../../src/node/index.js";
import { SessionStreams } from "../../src/node/stream-order.js";
import { addService, listen } from "../../src/wire/index.js";
import type { CallContext } from "../../src/wire/index.js";
import { HostError, ErrorCode } from "../../src/errors/index.js";
import { RecordingSink, startInfo } from "./fixtures.js";

type EventInit = MessageInitShape<typeof EventSchema>;

/** A promise opened from outside. */
function gate(): { promise: Promise<void>; open(): void } {
  let open = (): void => undefined;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

const dir = mkdtempSync(join(tmpdir(), "hh-streamorder-"));
let server: Server;
let address: string;
/** What the node saw, in order. */
const seen: string[] = [];
/** Sessions whose stream is open on the node. */
const open = new Set<string>();
/** Per execution id: held until opened before the node ends that stream with OK ("linger": never). */
const closeGates = new Map<string, Promise<void> | "linger">();

async function* connect(frames: AsyncIterable<ControllerFrame>, ctx: CallContext): AsyncIterable<EventInit> {
  const first = await frames[Symbol.asyncIterator]().next();
  if (first.done === true) return;
  const { session, executionId } = first.value;
  seen.push(`start ${executionId}`);
  if (open.has(session)) throw new HostError(ErrorCode.SessionBusy, `session ${session} is busy`);
  open.add(session);
  try {
    yield { executionId, kind: EventKind.EVENT_END, body: { case: "end", value: { state: "COMPLETED" } } };
    const held = closeGates.get(executionId);
    if (held === "linger") {
      await new Promise<void>((resolve) => {
        if (ctx.signal.aborted) resolve();
        else ctx.signal.addEventListener("abort", () => resolve(), { once: true });
      });
    } else if (held !== undefined) await held;
  } finally {
    open.delete(session);
    seen.push(`${ctx.signal.aborted ? "cancelled" : "ended"} ${executionId}`);
  }
}

beforeAll(async () => {
  server = new Server();
  addService(server, HarnessService, { describe: () => ({ id: "order-watch" }), connect });
  const unimplemented = (): never => {
    throw new HostError(ErrorCode.Unimplemented, "not served by this test node");
  };
  addService(server, Actors, {
    dropActor: (req: { session: string }) => {
      seen.push(`drop ${req.session}`);
      return { dropped: !open.has(req.session) };
    },
    snapshotActor: unimplemented,
    restoreActor: unimplemented,
    restoreActorWhole: unimplemented,
    listActors: () => ({ actors: [] }),
    nodeInfo: unimplemented,
    putHistory: unimplemented,
  });
  address = await listen(server, `unix://${join(dir, "node.sock")}`);
});
afterAll(() => {
  server.forceShutdown();
  rmSync(dir, { recursive: true, force: true });
});

/** A SessionStreams that reports when a call starts waiting for a stream still ending. */
class WatchedStreams extends SessionStreams {
  readonly #waiting = gate();
  #ending = 0;
  get waiting(): Promise<void> {
    return this.#waiting.promise;
  }
  override ending(addr: string, session: string, tail: Promise<void>): void {
    this.#ending += 1;
    super.ending(
      addr,
      session,
      tail.then(() => {
        this.#ending -= 1;
      }),
    );
  }
  override ended(addr: string, session: string, signal?: AbortSignal): Promise<void> {
    const p = super.ended(addr, session, signal);
    if (this.#ending > 0) this.#waiting.open();
    return p;
  }
}

const turn = (r: RemoteHarness, id: string, session: string): Promise<void> =>
  r.run(startInfo(id, "go", { sessionUid: session }), new RecordingSink(), new AbortController().signal);

describe("a session's next node call waits for its previous stream (§4.6 item 9)", () => {
  it("aTurnReturnsBeforeItsStreamsStatusArrives and theNextStartNeverReachesTheNodeBeforeThePreviousStreamEnded", async () => {
    seen.length = 0;
    const close1 = gate();
    closeGates.set("00000000000000a1", close1.promise);
    const streams = new WatchedStreams();
    const r = new RemoteHarness({ address, session: "s1", streams });
    try {
      await turn(r, "00000000000000a1", "s1");
      // run() returned while the node still holds its stream open: no status can have arrived.
      expect(seen).toEqual(["start 00000000000000a1"]);
      const second = turn(r, "00000000000000a2", "s1");
      await streams.waiting;
      // A round trip on the same connection: a host that had not waited would have sent its Start by now.
      await r.describe();
      close1.open();
      await second;
      await streams.ended(address, "s1");
      expect(seen).toEqual([
        "start 00000000000000a1",
        "ended 00000000000000a1",
        "start 00000000000000a2",
        "ended 00000000000000a2",
      ]);
    } finally {
      r.close();
    }
  });

  it("theSessionsDropActorNeverReachesTheNodeBeforeThePreviousStreamEnded", async () => {
    seen.length = 0;
    const close1 = gate();
    closeGates.set("00000000000000b1", close1.promise);
    const streams = new WatchedStreams();
    const r = new RemoteHarness({ address, session: "s2", streams });
    const actors = new ActorsClient({ address, streams });
    try {
      await turn(r, "00000000000000b1", "s2");
      const drop = actors.drop("s2");
      await streams.waiting;
      // A round trip on the same connection: a client that had not waited would have sent DropActor by now.
      await actors.list();
      close1.open();
      expect(await drop).toBe(true);
      expect(seen).toEqual(["start 00000000000000b1", "ended 00000000000000b1", "drop s2"]);
    } finally {
      r.close();
      actors.close();
    }
  });

  it("aStreamThatNeverEndsIsCancelledAtItsBoundAndTheNextStartThenGoesInsteadOfHanging", async () => {
    seen.length = 0;
    closeGates.set("00000000000000c1", "linger");
    const streams = new SessionStreams();
    const r = new RemoteHarness({ address, session: "s3", streams });
    try {
      await turn(r, "00000000000000c1", "s3");
      await turn(r, "00000000000000c2", "s3");
      expect(seen.slice(0, 3)).toEqual([
        "start 00000000000000c1",
        "cancelled 00000000000000c1",
        "start 00000000000000c2",
      ]);
    } finally {
      r.close();
    }
  });

  it("aWaitingCallFollowsItsOwnSignal", async () => {
    seen.length = 0;
    const close1 = gate();
    closeGates.set("00000000000000d1", close1.promise);
    const streams = new SessionStreams();
    const r = new RemoteHarness({ address, session: "s4", streams });
    try {
      await turn(r, "00000000000000d1", "s4");
      const cancel = new AbortController();
      const waiting = r.run(
        startInfo("00000000000000d2", "go", { sessionUid: "s4" }),
        new RecordingSink(),
        cancel.signal,
      );
      cancel.abort(new HostError(ErrorCode.Cancelled, "caller left"));
      await expect(waiting).rejects.toThrow(/caller left/);
      close1.open();
      await streams.ended(address, "s4");
      expect(seen).toEqual(["start 00000000000000d1", "ended 00000000000000d1"]);
    } finally {
      r.close();
    }
  });
});
