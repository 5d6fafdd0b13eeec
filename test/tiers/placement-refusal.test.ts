// CanPlace end to end (issue "Snapshot tiers", items 4 and 5): a memory-tier harness is refused on a
// filesystem-only runtime before any compute is created or anything is journaled; a remote node is
// memory-capable exactly while it serves harnesshost.v1.Actors, re-checked at every admission.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import counterAgent from "../../harnesses/counteragent/index.js";
import { Lifecycle_Kind } from "../../src/gen/agentsessions/v1/common_pb.js";
import { textMessage } from "../../src/controller/index.js";
import { ErrorCode, grpcStatusOf, isHostError } from "../../src/errors/index.js";
import { ActorsClient, serveHarness, type HarnessNode } from "../../src/node/index.js";
import { LocalRuntime } from "../../src/runtime/local.js";
import {
  childMetas,
  closeAll,
  expectChainVerifies,
  headSeq,
  lifecycleOf,
  openTestHost,
  rejectsWithCode,
  signal,
  turn,
  turns,
  until,
} from "./helpers.js";

const sockDir = mkdtempSync(join(tmpdir(), "hh-tiers-remote-"));
const nodes: HarnessNode[] = [];

afterEach(async () => {
  for (const n of nodes.splice(0)) await n.close();
  await closeAll();
});
afterAll(() => rmSync(sockDir, { recursive: true, force: true }));

describe("CanPlace: memory harness on a filesystem-only runtime", () => {
  it("counter on the local runtime: Exec, Resume, Suspend and Fork are refused unplaceable, head stays 0, no compute is created", async () => {
    const host = await openTestHost({ harnesses: [{ name: "localcounter", runtime: "local", target: "counter" }] });
    const runtime = host.registry.resolve("localcounter").runtime;
    expect(runtime).toBeInstanceOf(LocalRuntime);
    const create = vi.spyOn(runtime, "create");
    const restore = vi.spyOn(runtime, "restore");
    const fork = vi.spyOn(runtime, "fork");
    const snapshot = vi.spyOn(runtime, "snapshot");
    const session = (await host.createSession({ harness: "localcounter" })).uid;

    const exec = await rejectsWithCode(
      host.placer.exec({ session, inputs: [textMessage("user", "go")], signal: signal() }),
      ErrorCode.Unplaceable,
    );
    expect(exec.message).toContain("REQUIRES_MEMORY_SNAPSHOT");
    expect(grpcStatusOf(ErrorCode.Unplaceable)).toBe(GrpcStatus.FAILED_PRECONDITION);
    await rejectsWithCode(host.placer.resume(session, signal()), ErrorCode.Unplaceable);
    await rejectsWithCode(host.placer.suspend(session, signal()), ErrorCode.Unplaceable);
    const children = childMetas(2, "localcounter");
    await rejectsWithCode(
      host.placer.fork({ parent: session, atSeq: 0, children, signal: signal() }),
      ErrorCode.Unplaceable,
    );

    expect(await headSeq(host, session)).toBe(0);
    expect(await host.journal.currentFence(session)).toBe(0);
    for (const c of children) expect(await host.journal.getSession(c.uid)).toBeUndefined();
    expect(create).not.toHaveBeenCalled();
    expect(restore).not.toHaveBeenCalled();
    expect(fork).not.toHaveBeenCalled();
    expect(snapshot).not.toHaveBeenCalled();

    // The same host still places the stateless echo on the local runtime.
    const echo = (await host.createSession({ harness: "echo" })).uid;
    expect(await turn(host, echo, "hi")).toEqual(["echo:hi"]);
  });
});

describe("CanPlace: a remote harness node is memory-capable only while it serves Actors", () => {
  it("a node without Actors refuses the counter; a node with Actors on the same address is accepted and keeps continuity through suspend/resume", async () => {
    const address = `unix://${join(sockDir, "counter.sock")}`;
    nodes.push(await serveHarness(counterAgent, { listen: address, actors: false }));
    const host = await openTestHost({ harnesses: [{ name: "remotecounter", runtime: "remote", target: address }] });
    const session = (await host.createSession({ harness: "remotecounter" })).uid;

    await rejectsWithCode(
      host.placer.exec({ session, inputs: [textMessage("user", "go")], signal: signal() }),
      ErrorCode.Unplaceable,
    );
    await rejectsWithCode(
      host.placer.fork({ parent: session, atSeq: 0, children: childMetas(1, "remotecounter"), signal: signal() }),
      ErrorCode.Unplaceable,
    );
    expect(await headSeq(host, session)).toBe(0);

    // Another node takes over the address, this one with Actors: the next admission sees it.
    await nodes.pop()!.close();
    const withActors = await serveHarness(counterAgent, { listen: address });
    nodes.push(withActors);
    // The host's channel to the old node may still be reconnecting (UNAVAILABLE, nothing journaled).
    let first: readonly string[] = [];
    await until("the remote node with Actors accepts the counter", async () => {
      try {
        first = await turn(host, session);
        return true;
      } catch (err) {
        if (isHostError(err, ErrorCode.Unavailable)) return false;
        throw err;
      }
    });
    expect(first).toEqual(["1"]);
    expect(await turns(host, session, 2)).toEqual(["2", "3"]);

    const { record } = await host.placer.suspend(session, signal());
    const suspend = lifecycleOf(record, Lifecycle_Kind.LIFECYCLE_SUSPEND);
    expect(suspend?.snapshotMemory).toBe(true);
    expect(suspend?.snapshotExternalUri).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(await host.snapshots.has(suspend!.snapshotExternalUri)).toBe(true);
    // Suspend freed the actor on the node.
    const actors = new ActorsClient({ address });
    try {
      expect((await actors.list()).map((a) => a.session)).not.toContain(session);
    } finally {
      actors.close();
    }

    const resumed = await host.placer.resume(session, signal());
    expect(lifecycleOf(resumed.record, Lifecycle_Kind.LIFECYCLE_RESUME)).toBeDefined();
    expect(await turn(host, session)).toEqual(["4"]);
    await expectChainVerifies(host, session);

    // And back: a node without Actors on that address is refused again, the journal unchanged.
    const head = await headSeq(host, session);
    await nodes.pop()!.close();
    nodes.push(await serveHarness(counterAgent, { listen: address, actors: false }));
    await until("the remote node without Actors is seen and refused", async () => {
      try {
        await turn(host, session);
      } catch (err) {
        if (isHostError(err, ErrorCode.Unavailable)) return false;
        if (isHostError(err, ErrorCode.Unplaceable)) return true;
        throw err;
      }
      throw new Error("a memory harness ran on a node without Actors");
    });
    expect(await headSeq(host, session)).toBe(head);
  });
});
