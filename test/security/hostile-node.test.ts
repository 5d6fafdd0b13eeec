// The hostile-node suite (docs/operations.md, "Limits"): a registered node that never answers a
// call, never ends a turn, or sends more than the host's limits allow cannot wedge a session or the host.
// Each case asserts the status the caller gets, that the session is not left busy (and, where it
// applies, that other sessions on the same node still run); after every case the host, served over
// gRPC, must answer health within 1 s and every journal must verify. Bounded: every deadline here is a
// configured limit of a few hundred ms, every node listens on a unix socket in a temp directory.
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { builtinHarnesses } from "../../harnesses/index.js";
import { ErrorCode } from "../../src/errors/index.js";
import type { Host } from "../../src/host/host.js";
import type { LimitOverrides } from "../../src/limits/index.js";
import { CounterAgent } from "../../harnesses/counteragent/index.js";
import { DEMO_WRITE_TOOL, readDemoWrites } from "../../harnesses/ask/demo-write.js";
import { projectExecutions } from "../../src/projection/session-log.js";
import { EventKind, Mediation, ToolCallSchema } from "../../src/gen/agentsessions/v1/common_pb.js";
import { HarnessDescriptorSchema, Resumability } from "../../src/gen/agentsessions/v1/harness_pb.js";
import type { HostConfigInput } from "../../src/host/config.js";
import type { HostOverrides } from "../../src/host/host.js";
import { type RunningServer, startServer } from "../../src/server/server.js";
import { pino } from "pino";
import { allJournalsVerify, healthServing } from "./hostile-helpers.js";
import { HostError } from "../../src/errors/index.js";
import type { EventSink, StartInfo } from "../../src/harness/types.js";
import { type EvilNode, serveEvilNode, silentStream, untilCancelled } from "../fixtures/evil-node.js";
import { ScriptedHarness } from "../node/fixtures.js";
import {
  CountingModel,
  closeAll,
  expectChainVerifies,
  openTestHost,
  rejectsWithCode,
  signal,
  turn,
} from "../tiers/helpers.js";

const counter = builtinHarnesses["counter"]!;
const nodes: EvilNode[] = [];

const served: { host: Host; server: RunningServer }[] = [];

/**
 * A test host behind a real gRPC server: after every case the host must still answer health within
 * 1 s and every journal it holds must verify (checked in afterEach, so no case can skip it).
 */
async function openHost(config: HostConfigInput, overrides: HostOverrides = {}): Promise<Host> {
  const host = await openTestHost(config, overrides);
  const server = await startServer(host, {
    addr: "127.0.0.1:0",
    registryAddr: "127.0.0.1:0",
    logger: pino({ level: "silent" }),
  });
  served.push({ host, server });
  return host;
}

afterEach(async () => {
  try {
    for (const { host, server } of served) {
      await healthServing(server.addr, 1000);
      await allJournalsVerify(host.journal);
    }
  } finally {
    for (const { server } of served.splice(0)) await server.close(0);
    await closeAll();
    for (const n of nodes.splice(0)) await n.close();
  }
});
afterAll(async () => {
  await closeAll();
});

/** A host whose only registered harness `evil` is the given node, with short node deadlines. */
async function hostOn(node: EvilNode, limits: LimitOverrides): Promise<Host> {
  nodes.push(node);
  return openHost({ harnesses: [{ name: "evil", runtime: "remote", target: node.address }], limits });
}

describe("a remote memory-tier node whose SnapshotActor never answers", () => {
  it("silent snapshot: Exec completes, the session is not left busy, other sessions run, Suspend fails DEADLINE_EXCEEDED naming snapshotMs", async () => {
    const node = await serveEvilNode(counter, {
      actors: {
        // Never sends a chunk; ends only when the host cancels the call (or its deadline passes).
        snapshotActor: (_req, ctx) => silentStream(ctx.signal),
      },
    });
    const host = await hostOn(node, { snapshotMs: 300 });
    const a = (await host.createSession({ harness: "evil" })).uid;
    const b = (await host.createSession({ harness: "evil" })).uid;

    // The turn committed; its every-turn checkpoint misses its deadline and is skipped, not awaited forever.
    expect(await turn(host, a)).toEqual(["1"]);
    expect(host.placer.guard.isBusy(a)).toBe(false);
    expect(await turn(host, b)).toEqual(["1"]);
    expect(await turn(host, a)).toEqual(["2"]);
    expect(node.calls.get("snapshotActor")).toBe(3);

    const err = await rejectsWithCode(host.placer.suspend(a, signal()), ErrorCode.DeadlineExceeded);
    expect(err.message).toContain("snapshotMs=300");
    expect(host.placer.guard.isBusy(a)).toBe(false);
    // The failed suspend wrote nothing and left the live actor serving.
    expect(await turn(host, a)).toEqual(["3"]);
    await expectChainVerifies(host, a);
    await expectChainVerifies(host, b);
  });
});

describe("a memory fork whose parent snapshot never answers", () => {
  it("fork snapshot is cancelled when its client goes: the node's SnapshotActor call is cancelled, Fork fails CANCELLED and writes nothing", async () => {
    // The turn's every-turn checkpoint is answered; from the fork's snapshot on the node goes silent.
    let silent = false;
    let snapshotCancelled: Promise<void> | undefined;
    let forkSnapshotStarted: () => void = () => {};
    const started = new Promise<void>((resolve) => {
      forkSnapshotStarted = resolve;
    });
    const node = await serveEvilNode(counter, {
      actors: (real) => ({
        snapshotActor: (req, ctx) => {
          if (!silent) return real.snapshotActor(req, ctx);
          snapshotCancelled = untilCancelled(ctx.signal);
          forkSnapshotStarted();
          return silentStream(ctx.signal);
        },
      }),
    });
    // snapshotMs far above the test's timeout: only the client going away can end the fork's snapshot.
    const host = await hostOn(node, { snapshotMs: 600_000 });
    const parent = (await host.createSession({ harness: "evil" })).uid;
    expect(await turn(host, parent)).toEqual(["1"]);
    const before = await host.journal.readRange(parent);
    silent = true;

    const client = new AbortController();
    const fork = host.placer.fork({
      parent,
      atSeq: 0,
      children: [{ uid: "fork-child-cancelled", project: "default", harness: "evil" }],
      signal: client.signal,
    });
    const outcome = fork.then(
      () => undefined,
      (err: unknown) => err,
    );
    await started;
    client.abort();
    const err = await outcome;
    expect(err).toBeInstanceOf(HostError);
    expect((err as HostError).code).toBe(ErrorCode.Cancelled);
    await snapshotCancelled;

    // Nothing written: the parent's records are as before the fork, and no child exists.
    expect((await host.journal.readRange(parent)).map((r) => r.contentHash)).toEqual(before.map((r) => r.contentHash));
    expect(await host.journal.readRange("fork-child-cancelled")).toEqual([]);
    expect(await host.journal.getSession("fork-child-cancelled")).toBeUndefined();
    expect(host.placer.guard.isBusy(parent)).toBe(false);
    silent = false;
    expect(await turn(host, parent)).toEqual(["2"]);
  });
});

describe("a node whose unary calls never answer", () => {
  it("silent describe: admission fails UNAVAILABLE within nodeCallMs and nothing is journaled", async () => {
    const node = await serveEvilNode(counter, {
      harness: { describe: (_req, ctx) => untilCancelled(ctx.signal).then(() => ({})) },
    });
    const host = await hostOn(node, { nodeCallMs: 200 });
    const session = (await host.createSession({ harness: "evil" })).uid;
    await rejectsWithCode(turn(host, session), ErrorCode.Unavailable);
    expect(await host.journal.readRange(session)).toEqual([]);
    expect(host.placer.guard.isBusy(session)).toBe(false);
  });

  it("silent list actors: Exec fails DEADLINE_EXCEEDED naming nodeCallMs, nothing is journaled, the session is not left busy", async () => {
    const node = await serveEvilNode(counter, {
      actors: { listActors: (_req, ctx) => untilCancelled(ctx.signal).then(() => ({ actors: [] })) },
    });
    const host = await hostOn(node, { nodeCallMs: 200 });
    const session = (await host.createSession({ harness: "evil" })).uid;
    const err = await rejectsWithCode(turn(host, session), ErrorCode.DeadlineExceeded);
    expect(err.message).toContain("nodeCallMs=200");
    expect(await host.journal.readRange(session)).toEqual([]);
    expect(host.placer.guard.isBusy(session)).toBe(false);
  });
});

/** The counter harness, except that input "hang" outputs once and then runs until the host cancels it. */
class EndlessCounter extends CounterAgent {
  override async run(start: StartInfo, sink: EventSink, signal: AbortSignal): Promise<void> {
    const part = start.inputs[0]?.parts[0]?.part;
    if (part?.case !== "text" || part.value.text !== "hang") return super.run(start, sink, signal);
    await sink.output("working", signal);
    await untilCancelled(signal);
    throw new HostError(ErrorCode.Cancelled, "cancelled by the host");
  }
}

describe("a node whose turn never ends", () => {
  it("endless turn: Exec fails DEADLINE_EXCEEDED naming turnMs, the turn is journaled as interrupted, the session and others run on", async () => {
    const node = await serveEvilNode(() => new EndlessCounter());
    const host = await hostOn(node, { turnMs: 300 });
    const a = (await host.createSession({ harness: "evil" })).uid;
    const b = (await host.createSession({ harness: "evil" })).uid;

    expect(await turn(host, a)).toEqual(["1"]);
    const err = await rejectsWithCode(turn(host, a, "hang"), ErrorCode.DeadlineExceeded);
    expect(err.message).toContain("turnMs=300");
    expect(host.placer.guard.isBusy(a)).toBe(false);
    const executions = projectExecutions(await host.journal.readRange(a));
    expect(executions.map((e) => e.completed)).toEqual([true, false]);
    await expectChainVerifies(host, a);
    // The node's other sessions, and this one, still take turns.
    expect(await turn(host, b)).toEqual(["1"]);
    expect(await turn(host, a)).toEqual(["2"]);
    await expectChainVerifies(host, b);
  });
});

/**
 * A stateless harness that does what its input says, as much as it is told to: `events N` (N small
 * outputs), `big N [K]` (K outputs of N bytes, default one), `models N` (N model calls), `tools N` (N unattended calls of
 * tool `noop`), `write` (demo.write unattended), `unknown` (an unattended call of a tool nobody runs).
 */
class GreedyHarness {
  describe() {
    return create(HarnessDescriptorSchema, {
      id: "greedy",
      version: "1",
      capabilities: { resumability: Resumability.STATELESS_REPLAY },
    });
  }
  async run(start: StartInfo, sink: EventSink, signal: AbortSignal): Promise<void> {
    const part = start.inputs[0]?.parts[0]?.part;
    const [command = "", arg = "0", times = "1"] = (part?.case === "text" ? part.value.text : "").split(" ");
    const n = Number(arg);
    const unattended = (tool: string, i: number) =>
      sink.toolCall(
        create(ToolCallSchema, {
          id: `c${i}`,
          tool,
          mediation: Mediation.CONTROLLER_MEDIATED,
          idempotencyKey: `${start.executionId}/c${i}`,
          args: { text: "x" },
        }),
        signal,
      );
    switch (command) {
      case "events":
        for (let i = 0; i < n; i++) await sink.output(`e${i}`, signal);
        return;
      case "big":
        for (let i = 0; i < Number(times); i++) await sink.output("x".repeat(n), signal);
        return;
      case "models":
        for (let i = 0; i < n; i++) await sink.model({ model: "m", messages: start.inputs }, signal);
        return;
      case "tools":
        for (let i = 0; i < n; i++) await unattended("noop", i);
        return;
      case "write":
        await unattended(DEMO_WRITE_TOOL, 0);
        return;
      case "unknown":
        await unattended("no.such.tool", 0);
        return;
      default:
        await sink.output(`ok ${command}`, signal);
    }
  }
}

/** The kinds of the session's records, and the code of its ERROR record if it has one. */
async function journalOf(host: Host, session: string): Promise<{ kinds: string[]; errorCode: number | undefined }> {
  const recs = await host.journal.readRange(session);
  const error = recs.find((r) => r.event.kind === EventKind.EVENT_ERROR)?.event.body;
  return {
    kinds: recs.map((r) => EventKind[r.event.kind]),
    errorCode: error?.case === "error" ? error.value.code : undefined,
  };
}

describe("a node that asks the host for more than its limits allow", () => {
  const greedy = () => new GreedyHarness();

  async function greedyHost(limits: LimitOverrides, extra: Partial<HostConfigInput> = {}, overrides = {}) {
    const node = await serveEvilNode(greedy);
    nodes.push(node);
    return openHost(
      { harnesses: [{ name: "evil", runtime: "remote", target: node.address }], limits, ...extra },
      overrides,
    );
  }

  /** Runs one turn that must fail RESOURCE_EXHAUSTED naming `limit`; checks the journal and the session. */
  async function refused(host: Host, input: string, limit: string): Promise<string> {
    const session = (await host.createSession({ harness: "evil" })).uid;
    const err = await rejectsWithCode(turn(host, session, input), ErrorCode.ResourceExhausted);
    expect(err.message).toContain(`${limit}=`);
    expect(host.placer.guard.isBusy(session)).toBe(false);
    expect((await journalOf(host, session)).errorCode).toBe(GrpcStatus.RESOURCE_EXHAUSTED);
    await expectChainVerifies(host, session);
    // The node and the host serve the next turn of the same session.
    expect(await turn(host, session, "fine")).toEqual(["ok fine"]);
    return session;
  }

  it("oversized event: an Event over eventBytes fails the turn RESOURCE_EXHAUSTED and is never journaled", async () => {
    const host = await greedyHost({ eventBytes: 64 * 1024 });
    const session = await refused(host, `big ${200 * 1024}`, "eventBytes");
    const { kinds } = await journalOf(host, session);
    expect(kinds.slice(0, 3)).toEqual(["EVENT_EXECUTION_START", "EVENT_INPUT", "EVENT_ERROR"]);
  });

  it("events per turn: the event past turnEvents fails the turn and is not journaled", async () => {
    const host = await greedyHost({ turnEvents: 20 });
    const session = await refused(host, "events 50", "turnEvents");
    const { kinds } = await journalOf(host, session);
    // Exactly the 20 allowed events were journaled before the turn's ERROR.
    expect(kinds.slice(0, kinds.indexOf("EVENT_ERROR")).filter((k) => k === "EVENT_OUTPUT")).toHaveLength(20);
  });

  it("bytes per turn: the event that crosses turnBytes fails the turn and is not journaled", async () => {
    const host = await greedyHost({ turnBytes: 64 * 1024 });
    const session = await refused(host, "big 20000 10", "turnBytes");
    const { kinds } = await journalOf(host, session);
    // Three 20 KB events fit in 64 KiB; the fourth crosses it and is not journaled.
    expect(kinds.slice(0, kinds.indexOf("EVENT_ERROR")).filter((k) => k === "EVENT_OUTPUT")).toHaveLength(3);
  });

  it("model calls per turn: the call past turnModelCalls is refused before it reaches the provider", async () => {
    const model = new CountingModel();
    const host = await greedyHost({ turnModelCalls: 3 }, {}, { model });
    await refused(host, "models 10", "turnModelCalls");
    expect(model.calls).toBe(3);
  });

  it("tool calls per turn: the call past turnToolCalls is refused before it is journaled or run", async () => {
    const host = await greedyHost({ turnToolCalls: 3 }, { toolsWithoutApproval: ["noop"] });
    const session = await refused(host, "tools 10", "turnToolCalls");
    const { kinds } = await journalOf(host, session);
    expect(kinds.filter((k) => k === "EVENT_TOOL_CALL")).toHaveLength(3);
  });
});

describe("the operator's tool policy, not the node's claim, decides what runs without approval", () => {
  it("unattended demo.write: a CONTROLLER_MEDIATED call of a tool the policy gates is PERMISSION_DENIED, nothing recorded or run", async () => {
    const node = await serveEvilNode(() => new GreedyHarness());
    nodes.push(node);
    const host = await openHost({ harnesses: [{ name: "evil", runtime: "remote", target: node.address }] });
    const session = (await host.createSession({ harness: "evil" })).uid;
    const err = await rejectsWithCode(turn(host, session, "write"), ErrorCode.PermissionDenied);
    expect(err.message).toContain("needs an operator's approval");
    const { kinds, errorCode } = await journalOf(host, session);
    expect(kinds).not.toContain("EVENT_TOOL_CALL");
    expect(errorCode).toBe(GrpcStatus.PERMISSION_DENIED);
    expect(readDemoWrites(join(host.config.dataDir, "demo-writes.jsonl"))).toEqual([]);
    await expectChainVerifies(host, session);
  });

  it("unknown tools: an unattended call of a tool nobody runs is refused the same way", async () => {
    const node = await serveEvilNode(() => new GreedyHarness());
    nodes.push(node);
    const host = await openHost({ harnesses: [{ name: "evil", runtime: "remote", target: node.address }] });
    const session = (await host.createSession({ harness: "evil" })).uid;
    await rejectsWithCode(turn(host, session, "unknown"), ErrorCode.PermissionDenied);
    expect((await journalOf(host, session)).kinds).not.toContain("EVENT_TOOL_CALL");
  });

  it("a tool the operator lists runs unattended", async () => {
    const node = await serveEvilNode(() => new GreedyHarness());
    nodes.push(node);
    const host = await openHost({
      harnesses: [{ name: "evil", runtime: "remote", target: node.address }],
      toolsWithoutApproval: [DEMO_WRITE_TOOL],
    });
    const session = (await host.createSession({ harness: "evil" })).uid;
    await turn(host, session, "write");
    expect(readDemoWrites(join(host.config.dataDir, "demo-writes.jsonl"))).toHaveLength(1);
  });
});

describe("a node's snapshots and tier", () => {
  it("oversized snapshot: a SnapshotActor stream past snapshotBytes is cut off; the checkpoint is skipped, Suspend fails RESOURCE_EXHAUSTED and writes nothing", async () => {
    const node = await serveEvilNode(() => new ScriptedHarness());
    const host = await hostOn(node, { snapshotBytes: 1024 * 1024 });
    const session = (await host.createSession({ harness: "evil" })).uid;
    expect(await turn(host, session, "grow")).toEqual([`blob=${2.5 * 1024 * 1024}`]);
    expect(await host.journal.latestCheckpoint(session)).toBeUndefined();
    const head = (await host.journal.head(session)).seq;
    const err = await rejectsWithCode(host.placer.suspend(session, signal()), ErrorCode.ResourceExhausted);
    expect(err.message).toContain("snapshotBytes=");
    expect((await host.journal.head(session)).seq).toBe(head);
    expect(host.placer.guard.isBusy(session)).toBe(false);
    expect(await turn(host, session, "count")).toEqual(["count=1"]);
    await expectChainVerifies(host, session);
  });

  it("wrong tier: a node that claims the memory tier but serves no Actors is refused FAILED_PRECONDITION before anything is journaled", async () => {
    const node = await serveEvilNode(() => new ScriptedHarness(), { actors: false });
    const host = await hostOn(node, {});
    const session = (await host.createSession({ harness: "evil" })).uid;
    await rejectsWithCode(turn(host, session, "count"), ErrorCode.Unplaceable);
    expect(await host.journal.readRange(session)).toEqual([]);
  });
});
