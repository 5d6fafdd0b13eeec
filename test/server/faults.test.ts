// Harness-node faults seen through the Sessions API (docs/protocol.md §4.6, §10): a node lost mid-turn fails the turn
// with INTERNAL and leaves it resumable; a node unreachable at admission is UNAVAILABLE with nothing
// journaled.
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { status } from "@grpc/grpc-js";
import { EventKind } from "../../src/gen/agentsessions/v1/common_pb.js";
import { Resumability } from "../../src/gen/agentsessions/v1/harness_pb.js";
import { codeOf, drain, gatedEchoModel, startFixture, userInput, type Fixture } from "./helpers.js";

const BIN = resolve(import.meta.dirname, "../../bin/harnesshost.js");
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Starts `harnesshost node --harness echo` on a unix socket and waits for its announcement. */
async function startNode(socket: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [BIN, "node", "--harness", "echo", "--listen", `unix://${socket}`], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  cleanups.push(async () => void child.kill("SIGKILL"));
  await new Promise<void>((ok, fail) => {
    child.once("exit", (code) => fail(new Error(`node exited early (${code})`)));
    createInterface({ input: child.stdout! }).on("line", (line) => {
      if (line.includes('"listening"')) ok();
    });
  });
  child.removeAllListeners("exit");
  return child;
}

async function register(f: Fixture, name: string, socket: string): Promise<void> {
  await f.registry.registerHarness({
    name,
    spec: {
      placement: { case: "remote", value: { address: `unix://${socket}` } },
      capabilities: { resumability: Resumability.STATELESS_REPLAY },
    },
  });
}

describe("harness node faults", () => {
  it("a node killed mid-turn fails the turn with INTERNAL and Resume completes it once the node is back", async () => {
    const gated = gatedEchoModel();
    const f = await startFixture({ overrides: { model: gated.model } });
    cleanups.push(() => f.close());
    const socket = join(f.dir, "node.sock");
    const node = await startNode(socket);
    await register(f, "flaky", socket);
    const exec = drain(f.sessions.exec({ harness: "flaky", inputs: [userInput("hi")] }));
    await gated.entered; // the node is now blocked waiting for the model's answer
    const exited = new Promise((r) => node.once("exit", r));
    node.kill("SIGKILL");
    await exited;
    gated.release();
    const { items, error } = await exec;
    expect(error?.grpcCode).toBe(status.INTERNAL);
    const first = items[0]?.update;
    const uid = first?.case === "session" ? (first.value.metadata?.uid ?? "") : "";
    expect(uid).toMatch(/^sess-/);
    const before = await f.host.journal.readRange(uid);
    expect(before.at(-1)?.event.kind).toBe(EventKind.EVENT_ERROR);
    expect(before.some((r) => r.event.kind === EventKind.EVENT_END)).toBe(false);

    await startNode(socket); // same address: the stale socket file is reclaimed
    const resumed = await f.sessions.resume({ session: uid });
    expect(resumed.lastSeq).toBeGreaterThan(BigInt(before.length));
    const after = await f.host.journal.readRange(uid);
    const kinds = after.map((r) => EventKind[r.event.kind]);
    expect(kinds).toContain("EVENT_END");
    expect(kinds.filter((k) => k === "EVENT_MODEL_CALL")).toHaveLength(1);
    expect((await f.host.journal.verify(uid)).ok).toBe(true);
  });

  it("a node unreachable at admission is UNAVAILABLE and nothing is journaled", async () => {
    const f = await startFixture();
    cleanups.push(() => f.close());
    await register(f, "gone", join(f.dir, "nobody.sock"));
    const session = await f.sessions.createSession({ session: { harness: "gone" } });
    const uid = session.metadata?.uid ?? "";
    const { error } = await drain(f.sessions.exec({ session: uid, inputs: [userInput("hi")] }));
    expect(error?.grpcCode).toBe(status.UNAVAILABLE);
    expect((await f.host.journal.head(uid)).seq).toBe(0);
    expect(await codeOf(f.sessions.resume({ session: uid }))).toBe(status.UNAVAILABLE);
    expect((await f.host.journal.head(uid)).seq).toBe(0);
  });

  it("a node unreachable at admission is dialled again: once it listens, the session's next Exec runs", async () => {
    const f = await startFixture();
    cleanups.push(() => f.close());
    const socket = join(f.dir, "late.sock");
    await register(f, "late", socket);
    const session = await f.sessions.createSession({ session: { harness: "late" } });
    const uid = session.metadata?.uid ?? "";
    for (let i = 0; i < 3; i++) {
      const { error } = await drain(f.sessions.exec({ session: uid, inputs: [userInput("hi")] }));
      expect(error?.grpcCode).toBe(status.UNAVAILABLE);
    }
    await startNode(socket);
    // The host's channel reconnects with a bounded backoff (NODE_RECONNECT_BACKOFF_MS): poll until then.
    const deadline = Date.now() + 30_000;
    let code: number | undefined = status.UNAVAILABLE;
    while (code === status.UNAVAILABLE && Date.now() < deadline) {
      const { error } = await drain(f.sessions.exec({ session: uid, inputs: [userInput("hi")] }));
      code = error?.grpcCode;
      if (code === status.UNAVAILABLE) await new Promise((r) => setTimeout(r, 100));
    }
    expect(code).toBeUndefined();
    const kinds = (await f.host.journal.readRange(uid)).map((r) => EventKind[r.event.kind]);
    expect(kinds).toContain("EVENT_END");
    expect((await f.host.journal.verify(uid)).ok).toBe(true);
  });
});
