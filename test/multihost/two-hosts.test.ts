// Two `serve` processes on one PostgreSQL schema: a registration made on one host is served by the
// other without a restart (on first use, and by the periodic sync); concurrent operations on one
// session through both hosts never interleave (one proceeds, the rest ABORTED); echo and counter
// sessions alternate hosts turn by turn, and a counter suspended on A resumes on B — a host whose live
// actor fell behind restores from the newest checkpoint instead of attaching it.
import { create } from "@bufbuild/protobuf";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { EventKind } from "../../src/gen/agentsessions/v1/common_pb.js";
import { Resumability } from "../../src/gen/agentsessions/v1/harness_pb.js";
import { HarnessSpecSchema, type HarnessSpec } from "../../src/gen/agentsessions/v1/harness_registry_pb.js";
import { messageText } from "../../src/model/text.js";
import { serveHarness, type HarnessNode } from "../../src/node/index.js";
import { Cluster, codeOf, eventually } from "./cluster.js";
import { Gate, GatedEcho, gates } from "./fixtures/gated-echo.js";
import { expectSound } from "./journal-checks.js";

// One pair of hosts on one fresh schema for the file (starting processes dominates the run time);
// every test works on sessions and harness names of its own.
let cluster: Cluster | undefined;
let node: HarnessNode | undefined;
beforeAll(async () => {
  cluster = await Cluster.start(2);
});
afterEach(async () => {
  gates.current = undefined;
  await node?.close();
  node = undefined;
});
afterAll(async () => {
  await cluster?.close();
});

function gatedSpec(address: string): HarnessSpec {
  return create(HarnessSpecSchema, {
    placement: { case: "remote", value: { address } },
    capabilities: { resumability: Resumability.STATELESS_REPLAY },
    descriptorId: "gated-echo",
  });
}

function started(): Cluster {
  if (!cluster) throw new Error("cluster not started");
  return cluster;
}

describe("two hosts, one database", () => {
  it("serves a harness registered on A through B without a restart, then refuses B's concurrent operations while A holds the session", async () => {
    const c = started();
    const [a, b] = [c.host(0), c.host(1)];
    node = await serveHarness(() => new GatedEcho(), { listen: "127.0.0.1:0", actors: false });
    await a.registry.registerHarness({ name: "gated", spec: gatedSpec(node.address) });

    // B started before the registration and is not restarted: the first call naming it loads it.
    const first = await b.api.exec({ harness: "gated", inputs: ["one"] });
    expect(first.output).toBe("echo:one");
    const s = first.session.metadata?.uid ?? "";

    const held = new Gate();
    gates.current = held;
    const turn = a.api.exec({ session: s, inputs: ["two"] });
    await held.entered; // A's turn is inside the harness now, holding the session
    expect(await codeOf(b.api.exec({ session: s, inputs: ["three"] }))).toBe(GrpcStatus.ABORTED);
    expect(await codeOf(b.api.suspend(s))).toBe(GrpcStatus.ABORTED);
    expect(await codeOf(b.api.fork({ session: s, atSeq: 0, count: 1 }))).toBe(GrpcStatus.ABORTED);
    expect(await codeOf(a.api.exec({ session: s, inputs: ["four"] }))).toBe(GrpcStatus.ABORTED);
    held.open();
    expect((await turn).output).toBe("echo:two");

    const j = await c.journal();
    const records = await j.readRange(s);
    const inputs = records
      .filter((r) => r.event.kind === EventKind.EVENT_INPUT)
      .map((r) => (r.event.body.case === "message" ? messageText(r.event.body.value) : ""));
    expect(inputs).toEqual(["one", "two"]); // nothing of the refused calls was written
    expect(await b.api.exec({ session: s, inputs: ["five"] })).toMatchObject({ output: "echo:five" });
    await expectSound(j, [s]);
  });

  it("a registration made on B becomes servable on A by the periodic sync alone", async () => {
    const c = started();
    const [a, b] = [c.host(0), c.host(1)];
    node = await serveHarness(() => new GatedEcho(), { listen: "127.0.0.1:0", actors: false });
    await b.registry.registerHarness({ name: "later", spec: gatedSpec(node.address) });
    // GetHarness reads the stored row without loading it; only the background sync makes it servable.
    await eventually(
      "A to serve the harness registered on B",
      async () => (await a.registry.getHarness({ name: "later" })).unservableReason === "",
    );
    expect((await a.api.exec({ harness: "later", inputs: ["hi"] })).output).toBe("echo:hi");
  });

  it("echo and counter sessions alternate hosts turn by turn; a host never attaches an actor another host moved past", async () => {
    const c = started();
    const hosts = [c.host(0), c.host(1)];
    const echo = await hosts[0]!.api.exec({ harness: "echo", inputs: ["t0"] });
    const counter = await hosts[0]!.api.exec({ harness: "counter", inputs: ["x"] });
    expect([echo.output, counter.output]).toEqual(["echo:t0", "1"]);
    const e = echo.session.metadata?.uid ?? "";
    const k = counter.session.metadata?.uid ?? "";
    const counts: string[] = [counter.output];
    for (let i = 1; i <= 5; i++) {
      const h = hosts[i % 2]!;
      expect((await h.api.exec({ session: e, inputs: [`t${i}`] })).output).toBe(`echo:t${i}`);
      counts.push((await h.api.exec({ session: k, inputs: ["x"] })).output);
    }
    // Host A's actor saw 1 then sat idle while B counted: attaching it would answer 2, not 3.
    expect(counts).toEqual(["1", "2", "3", "4", "5", "6"]);
    expect((await hosts[1]!.api.replay(e)).outputs).toEqual([
      "echo:t0",
      "echo:t1",
      "echo:t2",
      "echo:t3",
      "echo:t4",
      "echo:t5",
    ]);
    await expectSound(await c.journal(), [e, k]);
  });

  it("a counter suspended on A resumes on B, continues there and back on A, and forks across hosts", async () => {
    const c = started();
    const [a, b] = [c.host(0), c.host(1)];
    const one = await a.api.exec({ harness: "counter", inputs: ["x"] });
    const k = one.session.metadata?.uid ?? "";
    expect((await a.api.exec({ session: k, inputs: ["x"] })).output).toBe("2");
    const suspended = await a.api.suspend(k);
    expect(suspended.snapshot.memory).toBe(true);
    expect(suspended.snapshot.digest).toMatch(/^sha256:[0-9a-f]{64}$/);

    await b.api.resume(k); // B has never seen this session: the blob comes from the database
    expect((await b.api.exec({ session: k, inputs: ["x"] })).output).toBe("3");
    expect((await a.api.exec({ session: k, inputs: ["x"] })).output).toBe("4");
    expect((await b.api.exec({ session: k, inputs: ["x"] })).output).toBe("5"); // B's own actor was at 3

    const children = await a.api.fork({ session: k, atSeq: 0, count: 2 });
    const [c1, c2] = children.map((ch) => ch.metadata?.uid ?? "");
    expect((await b.api.exec({ session: c1!, inputs: ["x"] })).output).toBe("6");
    expect((await a.api.exec({ session: c2!, inputs: ["x"] })).output).toBe("6");
    expect((await b.api.exec({ session: c2!, inputs: ["x"] })).output).toBe("7");
    await b.api.resume(k);
    expect((await b.api.exec({ session: k, inputs: ["x"] })).output).toBe("6");
    await expectSound(await c.journal(), [k, c1!, c2!]);
  });
});
