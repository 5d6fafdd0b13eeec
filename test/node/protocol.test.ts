// serveHarness driven by RemoteHarness over a unix socket: sink calls cross the wire both ways, ENDs
// map to success or errors, and each session gets its own actor.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Resumability } from "../../src/gen/agentsessions/v1/harness_pb.js";
import { ErrorCode, HostError, isHostError } from "../../src/errors/index.js";
import { RemoteHarness, RemoteTurnError, serveHarness } from "../../src/node/index.js";
import type { HarnessNode } from "../../src/node/index.js";
import { RecordingSink, ScriptedHarness, failureOf, startInfo } from "./fixtures.js";

const dir = mkdtempSync(join(tmpdir(), "hh-node-"));
let node: HarnessNode;
const instances: ScriptedHarness[] = [];
const remotes: RemoteHarness[] = [];

function remote(session: string): RemoteHarness {
  const r = new RemoteHarness({ address: node.address, session });
  remotes.push(r);
  return r;
}

beforeAll(async () => {
  node = await serveHarness(
    () => {
      const h = new ScriptedHarness();
      instances.push(h);
      return h;
    },
    { listen: `unix://${join(dir, "node.sock")}` },
  );
});
afterAll(async () => {
  for (const r of remotes) r.close();
  await node.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("RemoteHarness ⇄ serveHarness", () => {
  it("describe returns the harness's descriptor", async () => {
    const d = await remote("s-describe").describe();
    expect(d.id).toBe("scripted");
    expect(d.capabilities?.resumability).toBe(Resumability.REQUIRES_MEMORY_SNAPSHOT);
  });

  it("a model call round-trips: the sink sees the request, the harness gets the answer and its usage", async () => {
    const sink = new RecordingSink();
    await remote("s-model").run(startInfo("0000000000000001", "model"), sink, new AbortController().signal);
    const call = sink.calls[0];
    expect(call?.kind).toBe("model");
    if (call?.kind !== "model") return;
    expect(call.request.model).toBe("m1");
    expect(call.request.params).toEqual({ temperature: "0" });
    expect(call.request.messages[0]?.parts[0]?.part.value).toMatchObject({ text: "model" });
    expect(sink.outputs()).toEqual(["host says: model (usage 7/3)"]);
  });

  it("output, report, usage and a tool call pass through in order", async () => {
    const sink = new RecordingSink();
    await remote("s-effects").run(startInfo("0000000000000002", "effects"), sink, new AbortController().signal);
    expect(sink.calls.map((c) => c.kind)).toEqual(["output", "report", "usage", "toolCall", "output"]);
    const [, report, usage, tool, last] = sink.calls;
    expect(report?.kind === "report" && report.result.id).toBe("t-self");
    expect(usage?.kind === "usage" && usage.usage.outputTokens).toBe(2n);
    expect(tool?.kind === "toolCall" && tool.call.idempotencyKey).toBe("k-1");
    expect(last?.kind === "output" && last.text).toBe("tool said ran search");
  });

  it("StartInfo carries the envelope's session and execution id, config, seq and identity", async () => {
    const sink = new RecordingSink();
    const start = startInfo("00000000000000aa", "start-info", {
      config: Buffer.from("cfg"),
      resumeFromSeq: 41,
      identity: {
        principal: { $typeName: "agentsessions.v1.IdentityRef", principal: "alice", issuer: "", subject: "" },
        canMintTokens: true,
      },
    });
    await remote("s-info").run(start, sink, new AbortController().signal);
    expect(sink.outputs()).toEqual([
      "session=s-info exec=00000000000000aa seq=41 config=cfg history=0 principal=alice mint=true",
    ]);
  });

  it("a harness that throws ends FAILED; the host sees the description and the code", async () => {
    const sink = new RecordingSink();
    const err = await failureOf(
      remote("s-throw").run(startInfo("0000000000000003", "throw"), sink, new AbortController().signal),
    );
    expect(err).toBeInstanceOf(RemoteTurnError);
    const e = err as RemoteTurnError;
    expect(e.state).toBe("FAILED");
    expect(e.message).toBe("scripted failure");
    expect(e.code).toBe(ErrorCode.FailedPrecondition);
    expect(sink.outputs()).toEqual(["about to fail"]);
    const plain = await failureOf(
      remote("s-throw").run(startInfo("0000000000000004", "throw-plain"), sink, new AbortController().signal),
    );
    expect(plain).toMatchObject({ state: "FAILED", message: "plain failure", code: ErrorCode.Internal });
  });

  it("two sessions on one node get distinct actors with separate state", async () => {
    const a = remote("s-a");
    const b = remote("s-b");
    const sink = new RecordingSink();
    const signal = new AbortController().signal;
    await a.run(startInfo("00000000000000a1", "count"), sink, signal);
    await a.run(startInfo("00000000000000a2", "count"), sink, signal);
    await b.run(startInfo("00000000000000b1", "count"), sink, signal);
    await a.run(startInfo("00000000000000a3", "count"), sink, signal);
    expect(sink.outputs()).toEqual(["count=1", "count=2", "count=1", "count=3"]);
  });

  it("one turn at a time per actor: a second Connect mid-turn is refused, and a cancel reaches the harness", async () => {
    const sink = new RecordingSink();
    const ac = new AbortController();
    const first = remote("s-busy").run(startInfo("00000000000000c1", "wait"), sink, ac.signal);
    await sink.outputSeen("waiting");
    const busy = await failureOf(
      remote("s-busy").run(startInfo("00000000000000c2", "count"), new RecordingSink(), new AbortController().signal),
    );
    expect(isHostError(busy, ErrorCode.SessionBusy)).toBe(true);
    ac.abort(new HostError(ErrorCode.DeadlineExceeded, "turn deadline"));
    const cancelled = await failureOf(first);
    expect(isHostError(cancelled, ErrorCode.DeadlineExceeded)).toBe(true);
    // The actor is released once the harness unwinds; poll with a deadline.
    const deadline = Date.now() + 10_000;
    for (;;) {
      const s = new RecordingSink();
      const r = await remote("s-busy")
        .run(startInfo("00000000000000c3", "count"), s, new AbortController().signal)
        .then(
          () => "ok",
          (e: unknown) => e,
        );
      if (r === "ok") {
        expect(s.outputs()).toEqual(["count=1"]);
        break;
      }
      expect(isHostError(r, ErrorCode.SessionBusy)).toBe(true);
      if (Date.now() > deadline) throw new Error("actor never released");
      await new Promise((res) => setImmediate(res));
    }
    expect(instances.some((h) => h.notes.includes("aborted"))).toBe(true);
  });

  it("a failing host sink fails run with the sink's own error and releases the actor", async () => {
    class DivergingSink extends RecordingSink {
      override async model(): Promise<never> {
        throw new HostError(ErrorCode.Diverged, "replay diverged at seq 4");
      }
    }
    const err = await failureOf(
      remote("s-diverge").run(
        startInfo("00000000000000d1", "model"),
        new DivergingSink(),
        new AbortController().signal,
      ),
    );
    expect(isHostError(err, ErrorCode.Diverged)).toBe(true);
    expect((err as Error).message).toBe("replay diverged at seq 4");
    const deadline = Date.now() + 10_000;
    for (;;) {
      const s = new RecordingSink();
      const r = await remote("s-diverge")
        .run(startInfo("00000000000000d2", "count"), s, new AbortController().signal)
        .then(
          () => "ok",
          (e: unknown) => e,
        );
      if (r === "ok") break;
      expect(isHostError(r, ErrorCode.SessionBusy)).toBe(true);
      if (Date.now() > deadline) throw new Error("actor never released");
      await new Promise((res) => setImmediate(res));
    }
  });

  it("an empty execution id is refused before anything is sent", async () => {
    const err = await failureOf(
      remote("s-x").run(startInfo("", "count"), new RecordingSink(), new AbortController().signal),
    );
    expect(isHostError(err, ErrorCode.InvalidArgument)).toBe(true);
  });

  it("describe against a node that is not listening is Unavailable", async () => {
    const r = new RemoteHarness({ address: `unix://${join(dir, "nobody.sock")}`, session: "s" });
    remotes.push(r);
    const err = await failureOf(r.describe());
    expect(isHostError(err, ErrorCode.Unavailable)).toBe(true);
  });
});
