// src/wire/flow-window.ts: a harness node lets a host send it BULK_FLOW_WINDOW_BYTES before waiting for a
// WINDOW_UPDATE, per stream (its SETTINGS) and per connection, instead of HTTP/2's 64 KiB — so a snapshot
// restore is not throttled to one 64 KiB window per round trip. Observed from a raw HTTP/2 client.
import { mkdtempSync, rmSync } from "node:fs";
import { type ClientHttp2Session, connect } from "node:http2";
import { connect as netConnect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HarnessNode, serveHarness } from "../../src/node/index.js";
import { BULK_FLOW_WINDOW_BYTES } from "../../src/wire/index.js";
import { ScriptedHarness } from "../node/fixtures.js";

const dir = mkdtempSync(join(tmpdir(), "hh-flow-"));
let node: HarnessNode;

beforeAll(async () => {
  node = await serveHarness(() => new ScriptedHarness(), { listen: `unix://${join(dir, "node.sock")}` });
});
afterAll(async () => {
  await node.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Resolves once `ok` holds for the session, polling its settings and state until the deadline. */
async function until(session: ClientHttp2Session, ok: (s: ClientHttp2Session) => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!ok(session)) {
    if (Date.now() > deadline) throw new Error(`window not widened: ${JSON.stringify(session.state)}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("bulk flow-control windows", () => {
  it("a harness node advertises BULK_FLOW_WINDOW_BYTES per stream and opens its connection window as wide", async () => {
    expect(BULK_FLOW_WINDOW_BYTES).toBeGreaterThan(65_535);
    const session = connect("http://localhost", { createConnection: () => netConnect(join(dir, "node.sock")) });
    try {
      await until(session, (s) => s.remoteSettings.initialWindowSize === BULK_FLOW_WINDOW_BYTES);
      await until(session, (s) => (s.state.remoteWindowSize ?? 0) >= BULK_FLOW_WINDOW_BYTES);
    } finally {
      session.destroy();
    }
  });
});
