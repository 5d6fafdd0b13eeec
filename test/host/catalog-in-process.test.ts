// Registration is the host's, not the server's: a Host opened in process registers a harness through
// its HarnessCatalog (src/host/harness-catalog.ts) with no server running, and serves it at once.
// Invariant: what RegisterHarness does over the wire, an in-process host does with the same catalog.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it } from "vitest";
import echoAgent from "../../harnesses/echoagent/index.js";
import { textMessage } from "../../src/controller/events.js";
import { Resumability } from "../../src/gen/agentsessions/v1/harness_pb.js";
import { HarnessSpecSchema, RegisterOutcome } from "../../src/gen/agentsessions/v1/harness_registry_pb.js";
import { HarnessCatalog } from "../../src/host/harness-catalog.js";
import { Host } from "../../src/host/host.js";
import { serveHarness, type HarnessNode } from "../../src/node/index.js";

let dir: string | undefined;
let host: Host | undefined;
let catalog: HarnessCatalog | undefined;
let node: HarnessNode | undefined;
afterEach(async () => {
  await catalog?.stop();
  await host?.close();
  await node?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = host = catalog = node = undefined;
});

describe("HarnessCatalog in process", () => {
  it("aHostInProcessRegistersAHarnessAndRunsATurnOnItWithNoServer", async () => {
    dir = mkdtempSync(join(tmpdir(), "hh-catalog-"));
    host = await Host.open({ dataDir: dir, nodeIdleMs: 0 });
    node = await serveHarness(echoAgent, { listen: "127.0.0.1:0", actors: false });
    catalog = new HarnessCatalog(host);
    await catalog.load();
    const spec = create(HarnessSpecSchema, {
      placement: { case: "remote", value: { address: node.address } },
      capabilities: { resumability: Resumability.STATELESS_REPLAY },
      descriptorId: "echo",
    });
    const { outcome, harness } = await catalog.register("mine", spec);
    expect(outcome).toBe(RegisterOutcome.CREATED);
    expect((await catalog.get("mine", false, new AbortController().signal)).metadata?.uid).toBe(harness.metadata?.uid);

    const session = await host.createSession({ harness: "mine" });
    expect(session.harness).toBe("mine");
    const turn = await host.placer.exec({
      session: session.uid,
      inputs: [textMessage("user", "hi")],
      signal: new AbortController().signal,
    });
    expect(turn.outputs).toEqual(["echo:hi"]);
  });
});
