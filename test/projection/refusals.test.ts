// Refusals judged from the session-log projection come before any process, actor, fence or write
// (docs/protocol.md §5.8 rule 6), and Suspend and Fork of a memory session with a pending turn capture
// that turn's restart point, never the live actor (§5.8 rule 7).
import { afterEach, describe, expect, it } from "vitest";
import { textMessage } from "../../src/controller/index.js";
import { ErrorCode } from "../../src/errors/index.js";
import type { Host } from "../../src/host/host.js";
import { childMetas, closeAll, openTestHost, rejectsWithCode, signal } from "../tiers/helpers.js";
import { decide, newSession, parkTurn, writesOf } from "../waits/helpers.js";

afterEach(closeAll);

/** Records every runtime call made for `harness` from now on. */
function spyRuntime(host: Host, harness: string): string[] {
  const runtime = host.registry.resolve(harness).runtime;
  const calls: string[] = [];
  for (const m of ["describe", "capabilities", "create", "restore", "snapshot", "stop", "fork"] as const) {
    const original = runtime[m].bind(runtime) as (...a: unknown[]) => unknown;
    (runtime as unknown as Record<string, unknown>)[m] = (...a: unknown[]) => {
      calls.push(m);
      return original(...a);
    };
  }
  return calls;
}

async function forkOne(host: Host, parent: string, harness: string): Promise<string> {
  const res = await host.placer.fork({ parent, atSeq: 0, children: childMetas(1, harness), signal: signal() });
  return res.children[0]!.uid;
}

describe("refusals before any compute or write", () => {
  it("Resume of an inherited decided gate makes no runtime call, mints no fence and appends nothing (askcounter)", async () => {
    const host = await openTestHost();
    const p = await newSession(host, "askcounter");
    await decide(host, p, await parkTurn(host, p), true);
    expect((await host.placer.resume(p, signal())).turn?.outputs).toEqual(["1 approved"]);
    await decide(host, p, await parkTurn(host, p, "second"), true);
    const child = await forkOne(host, p, "askcounter");
    const calls = spyRuntime(host, "askcounter");
    const head = (await host.journal.head(child)).seq;
    const fence = await host.journal.currentFence(child);
    await rejectsWithCode(host.placer.resume(child, signal()), ErrorCode.FailedPrecondition);
    expect(calls).toEqual([]);
    expect((await host.journal.head(child)).seq).toBe(head);
    expect(await host.journal.currentFence(child)).toBe(fence);
  });

  it("Resume of a turn recorded under another harness name is refused DIVERGED before any runtime call", async () => {
    const host = await openTestHost({ harnesses: [{ name: "ask2", runtime: "local", target: "ask" }] });
    const s = await newSession(host, "ask");
    const turn = await host.placer.exec({
      session: s,
      harness: "ask2",
      inputs: [textMessage("user", "x")],
      signal: signal(),
    });
    await decide(host, s, turn.parked!, true);
    const calls = spyRuntime(host, "ask");
    const head = (await host.journal.head(s)).seq;
    await rejectsWithCode(host.placer.resume(s, signal()), ErrorCode.Diverged);
    expect(calls).toEqual([]);
    expect((await host.journal.head(s)).seq).toBe(head);
    expect(writesOf(host, s)).toBe(0);
  });
});

describe("memory Suspend and Fork capture a pending turn's restart point", () => {
  it("a memory Fork after a first-turn park succeeds; the child starts from a fresh actor", async () => {
    const host = await openTestHost();
    const p = await newSession(host, "askcounter");
    const ref = await parkTurn(host, p);
    const child = await forkOne(host, p, "askcounter");
    await decide(host, child, await parkTurn(host, child, "c"), true);
    expect((await host.placer.resume(child, signal())).turn?.outputs).toEqual(["1 approved"]);
    await decide(host, p, ref, true);
    expect((await host.placer.resume(p, signal())).turn?.outputs).toEqual(["1 approved"]);
  });

  it("Fork and Suspend after a cancelled re-drive clone the turn's start, not the live actor's partial state", async () => {
    const { CutExecutor } = await import("./cut-executor.js");
    const { DemoWriteExecutor } = await import("../../harnesses/ask/demo-write.js");
    const { mkdtempSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const dataDir = mkdtempSync(join(tmpdir(), "hh-refusals-"));
    const tools = new CutExecutor(new DemoWriteExecutor(join(dataDir, "demo-writes.jsonl")));
    const host = await openTestHost({ dataDir }, { tools });
    const p = await newSession(host, "askcounter");
    await decide(host, p, await parkTurn(host, p), true);
    expect((await host.placer.resume(p, signal())).turn?.outputs).toEqual(["1 approved"]);
    await decide(host, p, await parkTurn(host, p, "second"), true);
    const abort = new AbortController();
    tools.cutNext(abort);
    await rejectsWithCode(host.placer.resume(p, abort.signal), ErrorCode.Cancelled);
    // The live actor now holds a partial run of turn 2; a child must start from turn 2's start (count 1).
    const child = await forkOne(host, p, "askcounter");
    await decide(host, child, await parkTurn(host, child, "c"), true);
    expect((await host.placer.resume(child, signal())).turn?.outputs).toEqual(["2 approved"]);
    // Suspend, then Resume: the turn is re-driven once from its start.
    await host.placer.suspend(p, signal());
    expect((await host.placer.resume(p, signal())).turn?.outputs).toEqual(["2 approved"]);
    expect(writesOf(host, p)).toBe(2);
  });
});
