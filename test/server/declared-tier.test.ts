// A registration's declared tier is binding: a spec that declares REQUIRES_MEMORY_SNAPSHOT is placed
// as memory-tier even when the node answers "stateless", so it is refused on a node without Actors
// (docs/protocol.md §7) before anything is journaled.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { status } from "@grpc/grpc-js";
import { Resumability } from "../../src/gen/agentsessions/v1/harness_pb.js";
import { serveHarness } from "../../src/node/serve.js";
import echo from "../../harnesses/echoagent/index.js";
import { drain, startFixture, userInput } from "./helpers.js";

const dir = mkdtempSync(join(tmpdir(), "hh-declared-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("declared tier", () => {
  it("a memory declaration on a stateless-only node is refused with FAILED_PRECONDITION and nothing journaled", async () => {
    const f = await startFixture();
    const node = await serveHarness(echo, { listen: `unix://${join(dir, "echo.sock")}`, actors: false });
    try {
      await f.registry.registerHarness({
        name: "claims-memory",
        spec: {
          placement: { case: "remote", value: { address: node.address } },
          capabilities: { resumability: Resumability.REQUIRES_MEMORY_SNAPSHOT },
        },
      });
      await f.registry.registerHarness({
        name: "claims-stateless",
        spec: {
          placement: { case: "remote", value: { address: node.address } },
          capabilities: { resumability: Resumability.STATELESS_REPLAY },
        },
      });
      const refused = await drain(f.sessions.exec({ harness: "claims-memory", inputs: [userInput("hi")] }));
      expect(refused.error?.grpcCode).toBe(status.FAILED_PRECONDITION);
      expect(refused.error?.message).toMatch(/declared by its registration/);
      const first = refused.items[0]?.update;
      const uid = first?.case === "session" ? (first.value.metadata?.uid ?? "") : "";
      expect((await f.host.journal.head(uid)).seq).toBe(0);
      const ok = await drain(f.sessions.exec({ harness: "claims-stateless", inputs: [userInput("hi")] }));
      expect(ok.error).toBeUndefined();
    } finally {
      await node.close();
      await f.close();
    }
  });
});
