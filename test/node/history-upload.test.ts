// History beyond one gRPC message (docs/protocol.md §8.10): a stateless session
// whose history is larger than the largest Start frame a node accepts (64 MiB) stays usable when the
// node no longer holds its history — the host uploads the history in chunks with PutHistory and the
// turn runs with exactly the journal's events. Before, every later turn failed "harness lost mid-turn".
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { afterAll, describe, expect, it } from "vitest";
import { EventKind } from "../../src/gen/agentsessions/v1/common_pb.js";
import { HarnessDescriptorSchema, Resumability } from "../../src/gen/agentsessions/v1/harness_pb.js";
import { ev, textMessage } from "../../src/controller/events.js";
import { ErrorCode } from "../../src/errors/index.js";
import { ActorsClient } from "../../src/node/actors-client.js";
import { serveHarness } from "../../src/node/serve.js";
import { HARNESS_MAX_RECEIVE_BYTES } from "../../src/node/limits.js";
import type { EventSink, Harness, StartInfo } from "../../src/harness/types.js";
import { type EvilNode, serveEvilNode, untilCancelled } from "../fixtures/evil-node.js";
import { historyLine } from "../fixtures/harnesses/history-digest.js";
import { closeAll, expectChainVerifies, openTestHost, rejectsWithCode, turn } from "../tiers/helpers.js";

/** Input `bulk N K` outputs K texts of N bytes; every turn ends with the history it received. */
class BulkHarness implements Harness {
  describe() {
    return create(HarnessDescriptorSchema, {
      id: "bulk",
      version: "1",
      capabilities: { resumability: Resumability.STATELESS_REPLAY },
    });
  }
  async run(start: StartInfo, sink: EventSink, signal: AbortSignal): Promise<void> {
    const part = start.inputs[0]?.parts[0]?.part;
    const [command, size = "0", times = "0"] = (part?.case === "text" ? part.value.text : "").split(" ");
    if (command === "bulk") for (let i = 0; i < Number(times); i++) await sink.output("x".repeat(Number(size)), signal);
    await sink.output(historyLine(start.history), signal);
  }
}

let node: EvilNode | undefined;
afterAll(async () => {
  await closeAll();
  await node?.close();
});

describe("a stateless session with more history than one Start frame carries", () => {
  it("history beyond one message: after the node forgets it, a history past 64 MiB is uploaded in chunks and the turn sees all of it", async () => {
    node = await serveEvilNode(() => new BulkHarness());
    const host = await openTestHost({ harnesses: [{ name: "bulk", runtime: "remote", target: node.address }] });
    const session = (await host.createSession({ harness: "bulk" })).uid;
    // 7 turns of 10 outputs of 1,000,000 bytes: ~67 MiB of history, past the node's receive limit.
    for (let i = 0; i < 7; i++) await turn(host, session, "bulk 1000000 10");
    const before = await host.journal.readRange(session);
    expect(before.reduce((n, r) => n + (r.event.body.case === "message" ? 1_000_000 : 0), 0)).toBeGreaterThan(
      HARNESS_MAX_RECEIVE_BYTES,
    );

    // The node forgets the session's history (as after a restart or an eviction).
    const actors = new ActorsClient({ address: node.address });
    try {
      await actors.drop(session);
    } finally {
      actors.close();
    }
    const outputs = await turn(host, session, "after");
    const records = await host.journal.readRange(session);
    const start = records.findLastIndex((r) => r.event.kind === EventKind.EVENT_EXECUTION_START);
    expect(outputs).toEqual([historyLine(records.slice(0, start).map((r) => r.event))]);
    await expectChainVerifies(host, session);
  });
});

describe("a node whose PutHistory never answers", () => {
  it("silent history upload fails DEADLINE_EXCEEDED naming historyUploadMs (not snapshotMs), the turn is journaled interrupted and the session is not left busy", async () => {
    const silent = await serveEvilNode(() => new BulkHarness(), {
      // Never answers; ends only when the host cancels the call (or its deadline passes).
      actors: { putHistory: (_req, ctx) => untilCancelled(ctx.signal).then(() => ({ held: 0n })) },
    });
    try {
      // snapshotMs far above the test's timeout: only historyUploadMs can end the upload.
      const host = await openTestHost({
        harnesses: [{ name: "bulk", runtime: "remote", target: silent.address }],
        limits: { snapshotMs: 600_000, historyUploadMs: 300 },
      });
      const session = (await host.createSession({ harness: "bulk" })).uid;
      // ~5 MB of history: past UPLOAD_HISTORY_ABOVE_BYTES, so a full send is an upload.
      for (let i = 0; i < 5; i++) await turn(host, session, "bulk 1000000 1");
      const actors = new ActorsClient({ address: silent.address });
      try {
        await actors.drop(session);
      } finally {
        actors.close();
      }
      const before = await host.journal.readRange(session);
      const err = await rejectsWithCode(turn(host, session, "after"), ErrorCode.DeadlineExceeded);
      expect(err.message).toContain("historyUploadMs=300");
      expect(silent.calls.get("putHistory")).toBe(1);
      // The turn is journaled as interrupted by the deadline (its ERROR names the limit) and stays resumable.
      const after = (await host.journal.readRange(session)).slice(before.length);
      expect(after.map((r) => r.event.kind)).toEqual([
        EventKind.EVENT_EXECUTION_START,
        EventKind.EVENT_INPUT,
        EventKind.EVENT_ERROR,
      ]);
      const error = after[2]?.event.body;
      expect(error?.case === "error" && error.value.code).toBe(GrpcStatus.DEADLINE_EXCEEDED);
      expect(host.placer.guard.isBusy(session)).toBe(false);
      await expectChainVerifies(host, session);
    } finally {
      await silent.close();
    }
  });
});

describe("a node that takes no history uploads", () => {
  it("aStartLargerThanTheNodeAcceptsIsResourceExhaustedSayingTheNodeRefusedIt: not eventBytes, which bounds what the host receives", async () => {
    // A reference-like node: no Actors (so no history cache and no PutHistory), a 64 KiB receive limit.
    const small = await serveEvilNode(() => new BulkHarness(), { actors: false, maxReceiveBytes: 64 * 1024 });
    try {
      const host = await openTestHost({ harnesses: [{ name: "bulk", runtime: "remote", target: small.address }] });
      const session = (await host.createSession({ harness: "bulk" })).uid;
      // ~300 KB of history: every later Start carries it whole, past the node's receive limit.
      await turn(host, session, "bulk 100000 3");
      const err = await rejectsWithCode(turn(host, session, "after"), ErrorCode.ResourceExhausted);
      expect(err.message).toContain(`harness node at ${small.address} refused a frame`);
      expect(err.message).toContain("its receive limit is 65536 bytes");
      expect(err.message).not.toContain("eventBytes");
      expect(host.placer.guard.isBusy(session)).toBe(false);
      await expectChainVerifies(host, session);
    } finally {
      await small.close();
    }
  });
});

describe("PutHistory on the SDK node (docs/protocol.md §8.10)", () => {
  it("put history refusals: a malformed token is INVALID_ARGUMENT, more events than the cache holds RESOURCE_EXHAUSTED", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hh-upload-"));
    const small = await serveHarness(() => new BulkHarness(), {
      listen: `unix://${join(dir, "n.sock")}`,
      historyCache: { maxEvents: 3 },
    });
    const actors = new ActorsClient({ address: small.address });
    try {
      const events = Array.from({ length: 4 }, (_, i) =>
        ev.output("0123456789abcdef", textMessage("assistant", `e${i}`)),
      );
      const token = "0".repeat(32);
      await rejectsWithCode(actors.putHistory("s", "not-a-token", events), ErrorCode.InvalidArgument);
      await rejectsWithCode(actors.putHistory("s", token, events), ErrorCode.ResourceExhausted);
      expect(await actors.putHistory("s", token, events.slice(0, 3))).toBe(3);
    } finally {
      actors.close();
      await small.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
