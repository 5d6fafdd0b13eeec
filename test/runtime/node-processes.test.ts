// The bound on harness node processes (docs/scaling.md, "Limits"): a spawned harness runs every one of
// its sessions' actors in one host-spawned node process, so a host starts at most one node per spawned
// harness it is configured with (registered harnesses are remote or vm, never spawned), however many
// sessions are live; suspending them all lets that node go idle, it never multiplies.
import { afterAll, describe, expect, it } from "vitest";
import { closeAll, openTestHost, signal, spawnedRuntimeOf, turn } from "../tiers/helpers.js";

afterAll(closeAll);

describe("harness node processes", () => {
  it("aSpawnedHarnessServesEverySessionFromOneNodeProcess", async () => {
    const host = await openTestHost({ nodeIdleMs: 60_000 });
    const sessions: string[] = [];
    for (let i = 0; i < 6; i++) {
      const uid = (await host.createSession({ harness: "counter" })).uid;
      expect(await turn(host, uid, "tick")).toEqual(["1"]);
      sessions.push(uid);
    }
    const runtime = spawnedRuntimeOf(host, "counter");
    const pids = new Set(sessions.map((s) => runtime.processOf(s)?.pid));
    expect(pids.size).toBe(1);
    expect([...pids][0]).toBe(runtime.currentNode?.pid);
    // A suspended session's next turn goes back to the same node, not a new one.
    await host.placer.suspend(sessions[0] as string, signal());
    expect(await turn(host, sessions[0] as string, "tick")).toEqual(["2"]);
    expect(runtime.processOf(sessions[0] as string)?.pid).toBe(runtime.currentNode?.pid);
  }, 60_000);
});
