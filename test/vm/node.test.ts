// The Node variant of the vm runtime (docs/runtimes.md, "vm"): `image build --node` bundles a JavaScript
// harness node (harnesses/node/counter_node.mjs, its count a module-level number) with the SDK and
// @grpc/grpc-js into one file beside the node binary, and the guest keeps its RAM across a whole-VM
// suspend and resume. One test: a guest boot is the slow part (tens of seconds under TCG).
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VmRuntime } from "../../src/runtime/vm.js";
import { DEFAULT_MEMORY_MB, buildImage } from "../../src/vm/image-build.js";
import { openImage } from "../../src/vm/image-manifest.js";
import { childMetas, closeAll, openTestHost, signal, turn, turns } from "../tiers/helpers.js";
import { runConformance } from "../../src/conformance/index.js";
import {
  NODE_COUNTER,
  buildNodeCounterImage,
  expectChildrenDrawApart,
  isolateCaches,
  privateImageCache,
  vmSkipReason,
} from "./vm-env.js";

const skip = vmSkipReason();
let dir = "";
let cache = "";

beforeAll(() => {
  if (skip) return;
  cache = isolateCaches();
  dir = mkdtempSync(join(tmpdir(), "hh-vmnode-"));
});

afterAll(async () => {
  await closeAll();
  if (dir) rmSync(dir, { recursive: true, force: true });
  if (cache) rmSync(cache, { recursive: true, force: true });
}, 60_000);

describe.skipIf(skip !== undefined)("vm runtime, Node image", () => {
  it("nodeImageKeepsItsRamAcrossSuspendResume: a Node counter image is reproducible and cached by content, placed as REQUIRES_MEMORY_SNAPSHOT on vm, and resumes at N+1 from a whole-VM snapshot", async () => {
    // The first build may be a copy: the run's vm files share one image cache (vm-env.ts).
    const built = await buildNodeCounterImage(dir, "nodecounter");
    expect(built.manifest.program).toEqual({ language: "node", file: "counter_node.mjs", args: [] });
    expect(built.manifest.memoryMb).toBe(DEFAULT_MEMORY_MB.node);
    const again = await buildNodeCounterImage(dir, "again");
    expect(again.cached).toBe(true);
    expect(again.manifest.digest).toBe(built.manifest.digest);
    await openImage(again.out); // both files hash to the manifest
    // Reproducible: bundling and assembling again without the cache gives the same bytes.
    const rebuilt = await buildImage({
      node: NODE_COUNTER,
      includes: [],
      args: [],
      out: join(dir, "rebuilt"),
      noCache: true,
      cacheDir: privateImageCache(cache),
    });
    expect(rebuilt.cached).toBe(false);
    expect(rebuilt.manifest.digest).toBe(built.manifest.digest);
    expect(
      readFileSync(join(rebuilt.out, "initrd.cpio.gz")).equals(readFileSync(join(built.out, "initrd.cpio.gz"))),
    ).toBe(true);

    const host = await openTestHost({
      harnesses: [{ name: "jsc", runtime: "vm", target: built.out, checkpointPolicy: "on-suspend" }],
    });
    const runtime = host.registry.resolve("jsc").runtime;
    expect(runtime).toBeInstanceOf(VmRuntime);
    const session = (await host.createSession({ harness: "jsc" })).uid;
    expect(await turns(host, session, 2)).toEqual(["1", "2"]);
    const { ref } = await host.placer.suspend(session, signal());
    expect(ref.memory).toBe(true);
    expect(ref.externalUri).toMatch(/^sha256:[0-9a-f]{64}$/);
    await host.placer.resume(session, signal());
    expect(await turns(host, session, 1)).toEqual(["3"]);
  }, 600_000);

  it("vmForkChildrenDrawDifferentUuids: two children of one whole-VM snapshot draw different values from every Node generator — crypto.randomUUID, globalThis.crypto.randomUUID, randomBytes, getRandomValues, randomInt, Math.random — and from the SDK's freshRandomUUID", async () => {
    const built = await buildNodeCounterImage(dir, "forkrandom");
    const host = await openTestHost({
      harnesses: [{ name: "jsr", runtime: "vm", target: built.out, checkpointPolicy: "on-suspend" }],
    });
    const parent = (await host.createSession({ harness: "jsr" })).uid;
    expect(await turns(host, parent, 1)).toEqual(["1"]);
    // The parent draws before the snapshot too: what it pooled or cached then is in both children's RAM.
    await turn(host, parent, "random");
    const kids = childMetas(2, "jsr");
    await host.placer.fork({ parent, atSeq: 0, children: kids, signal: signal() });
    const [a] = await expectChildrenDrawApart(
      (kid) => turn(host, kid, "random"),
      [kids[0]!.uid, kids[1]!.uid],
      ["fresh", "uuid", "webuuid", "bytes", "values", "int", "math"],
    );
    expect(a).toMatch(/ uuid=[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12} /);
    // The count is RAM, copied whole: each child continues at 2.
    expect(await turns(host, kids[0]!.uid, 1)).toEqual(["2"]);
  }, 600_000);

  it("the Node counter image passes memory.fork-randomness on vm", async () => {
    const built = await buildNodeCounterImage(dir, "conformance");
    const report = await runConformance({ harness: `vm:${built.out}`, turns: 2, only: ["memory.fork-randomness"] });
    const check = report.checks.find((c) => c.id === "memory.fork-randomness");
    expect(check?.status, check?.evidence).toBe("pass");
  }, 600_000);
});
