// The vm runtime end to end (docs/runtimes.md, "vm") on this machine's accelerator (TCG where KVM is unusable): the
// README's walkthrough 5 runs as written — the Python RAM-counter node passes the memory conformance
// checks in a guest, then is served, suspended, resumed and forked — the same node declared stateless
// is caught lying, and restored or forked guests get the host's clock and a reseeded RNG. One file so
// every test shares one image build and one base boot per image (the cache root is per file), and one
// run of walkthrough 5 (its memory conformance run is what two tests read; each VM operation of it
// costs seconds of CPU under TCG).
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { runConformance } from "../../src/conformance/index.js";
import { Resumability } from "../../src/gen/agentsessions/v1/harness_pb.js";
import { HarnessSpecSchema } from "../../src/gen/agentsessions/v1/harness_registry_pb.js";
import { startFixture } from "../server/helpers.js";
import { runDoc } from "../docs/npx-doc.js";
import { shBlocks } from "../docs/sh-script.js";
import { projectWorkdir } from "../package/shared.js";
import type { Host } from "../../src/host/host.js";
import { VmRuntime } from "../../src/runtime/vm.js";
import { canPlace } from "../../src/runtime/types.js";
import { childMetas, closeAll, openTestHost, rejectsWithCode, signal, turn, turns } from "../tiers/helpers.js";
import { ErrorCode } from "../../src/errors/index.js";
import { PG_URL, dropSchemas, freshSchema, rawClient } from "../journal/postgres-fixture.js";
import { ROOT, buildCounterImage, expectChildrenDrawApart, isolateCaches, vmSkipReason } from "./vm-env.js";
import { expectVmCounterPasses } from "../conformance/helpers.js";

const skip = vmSkipReason();
let dir = "";
let cache = "";
let image = "";
let liar = "";
let imageDigest = "";
const schemas: string[] = [];

/**
 * README walkthrough 5, run as written once per file, whichever test asks first: its output. Through
 * real npx in a project that installed the packed tarball (test/docs/npx-doc.ts: ports, and
 * harnesses/python/ as the checkout's files).
 */
let walkthrough5: Promise<string> | undefined;
function walkthrough5Output(): Promise<string> {
  walkthrough5 ??= (async () => {
    const work = await projectWorkdir("readme-vm");
    return runDoc(
      shBlocks(readFileSync(join(ROOT, "README.md"), "utf8"), "Walkthrough 5").join("\n"),
      work,
      900_000,
    ).finally(() => rmSync(work, { recursive: true, force: true }));
  })();
  return walkthrough5;
}

beforeAll(async () => {
  if (skip) return;
  cache = isolateCaches();
  dir = mkdtempSync(join(tmpdir(), "hh-vm-"));
  const counter = await buildCounterImage(dir, "counter");
  image = counter.out;
  imageDigest = counter.manifest.digest;
  liar = (await buildCounterImage(dir, "liar", ["--resumability", "STATELESS_REPLAY"])).out;
}, 180_000);

afterAll(async () => {
  await closeAll();
  await dropSchemas(schemas);
  if (dir) rmSync(dir, { recursive: true, force: true });
  if (cache) rmSync(cache, { recursive: true, force: true });
}, 60_000);

describe.skipIf(skip !== undefined)("vm runtime", () => {
  it("README walkthrough 5 runs as written: image build, memory conformance on vm:IMAGE passes (suspend/resume N+1, QEMU killed, fork, corrupt blob), serve, suspend/resume/fork", async () => {
    const out = await walkthrough5Output();
    const lines = out.split("\n");
    expect(out).toMatch(/^image \S+pycounter sha256:[0-9a-f]{64} \(initramfs [\d.]+ MB/m);
    expectVmCounterPasses(out);
    expect(out).toMatch(
      /^OK: 7 passed, 0 failed, 1 skipped — vm:\.\/\.harnesshost\/pycounter \(memory, descriptor pycounter\)/m,
    );
    expect(out).toMatch(/QEMU pid \d+ killed \(SIGKILL\)/);
    expect(out).toMatch(/snapshot memory=true digest=sha256:[0-9a-f]{64}/);
    expect(lines.filter((l) => /^\d+$/.test(l))).toEqual(["2", "3", "4", "4"]);
    expect(lines.filter((l) => l.startsWith("ok "))).toHaveLength(1);
  }, 900_000);

  it("the same node declared STATELESS_REPLAY fails as a liar: a restart answers like a cold boot", async () => {
    const report = await runConformance({
      harness: `vm:${liar}`,
      turns: 2,
      only: ["stateless.describe-valid", "stateless.restart-continues"],
    });
    const restart = report.checks.find((c) => c.id === "stateless.restart-continues");
    expect(report.tier).toBe("stateless");
    expect(restart?.status, restart?.evidence).toBe("fail");
    expect(restart?.evidence).toMatch(/cold boot/);
  }, 600_000);

  it("CanPlace admits a REQUIRES_MEMORY_SNAPSHOT harness on vm; forked guests get the host's clock, a diverging kernel RNG and a reseeded Python random module", async () => {
    const host: Host = await openTestHost({ harnesses: [{ name: "pyc", runtime: "vm", target: image }] });
    const runtime = host.registry.resolve("pyc").runtime;
    if (!(runtime instanceof VmRuntime)) throw new Error("pyc is not on the vm runtime");
    expect(canPlace(true, await runtime.capabilities())).toBe(true);
    const parent = (await host.createSession({ harness: "pyc" })).uid;
    expect(await turns(host, parent, 2)).toEqual(["1", "2"]);
    const before = Date.now();
    const metas = childMetas(2, "pyc");
    const children = metas.map((m) => m.uid);
    await host.placer.fork({ parent, atSeq: 0, children: metas, signal: signal() });
    const probes = [];
    for (const child of children) {
      const guest = runtime.guest(child);
      if (!guest) throw new Error(`child ${child} has no running guest after the fork`);
      probes.push(await guest.probeGuest());
      expect(guest.runtimesReseeded, "the harness process's reseed hook confirmed").toBe(1);
    }
    // Both children were restored from one blob taken before `before`: without the reseed their
    // clocks would read the snapshot's time and their kernel RNGs would produce the same bytes.
    for (const p of probes) expect(p.clockMs).toBeGreaterThanOrEqual(before);
    expect(probes[0]?.random).not.toBe(probes[1]?.random);
    // The harness's own Python: uuid4 and secrets read the reseeded kernel, `random` was reseeded in the process.
    await expectChildrenDrawApart(
      (c) => turn(host, c, "random"),
      [children[0]!, children[1]!],
      ["uuid4", "secrets", "random"],
    );
    for (const child of children) expect(await turns(host, child, 1)).toEqual(["3"]);
    // A guest killed from outside leaves no QEMU process and no private directory behind.
    const victim = runtime.guest(children[0] ?? "");
    if (!victim) throw new Error("the first child has no running guest");
    victim.kill();
    await victim.exited;
    expect(existsSync(victim.dir)).toBe(false);
    expect(await runtime.status(children[0] ?? "")).toBe("NONE");
  }, 600_000);

  it("the Python counter image passes memory.fork-randomness on vm", async () => {
    // Walkthrough 5's memory conformance run holds this check: its image is this file's counter image
    // (same inputs, same digest; the build there is a copy from the run's cache), so a run of the check
    // alone would boot, fork and snapshot the same guests again.
    const out = await walkthrough5Output();
    expect(out).toMatch(new RegExp(`^image \\S+pycounter ${imageDigest} `, "m"));
    expect(out).toMatch(/^memory\.fork-randomness\s+memory\s+PASS/m);
  }, 900_000);

  it("a registry placement substrate{atespace: vm, template: IMAGE} serves the image on the vm runtime; another template is refused", async () => {
    const f = await startFixture();
    try {
      const spec = (template: string) =>
        create(HarnessSpecSchema, {
          placement: { case: "substrate", value: { atespace: "vm", template } },
          capabilities: { resumability: Resumability.REQUIRES_MEMORY_SNAPSHOT },
        });
      const refused = await f.registry.registerHarness({ name: "notimage", spec: spec(dir) }).catch((e: unknown) => e);
      expect(refused).toMatchObject({
        grpcCode: GrpcStatus.FAILED_PRECONDITION,
        details: expect.stringContaining("not a vm image"),
      });
      await f.registry.registerHarness({ name: "pyvm", spec: spec(image) });
      expect(f.host.registry.resolve("pyvm").runtime).toBeInstanceOf(VmRuntime);
      const session = (await f.host.createSession({ harness: "pyvm" })).uid;
      expect(await turns(f.host, session, 2)).toEqual(["1", "2"]);
    } finally {
      await f.close();
    }
  }, 600_000);

  it("vm snapshot limits: a snapshot past vmSnapshotBytes is RESOURCE_EXHAUSTED, one past vmSnapshotMs DEADLINE_EXCEEDED; each writes nothing and the guest counts on", async () => {
    const cases = [
      { limits: { vmSnapshotBytes: 1024 * 1024 }, code: ErrorCode.ResourceExhausted, names: "vmSnapshotBytes=1 MiB" },
      { limits: { vmSnapshotMs: 10 }, code: ErrorCode.DeadlineExceeded, names: "vmSnapshotMs=10 ms" },
    ];
    for (const c of cases) {
      const host = await openTestHost({
        harnesses: [{ name: "pyc", runtime: "vm", target: image, checkpointPolicy: "on-suspend" }],
        limits: c.limits,
      });
      const session = (await host.createSession({ harness: "pyc" })).uid;
      expect(await turns(host, session, 2)).toEqual(["1", "2"]);
      const before = (await host.journal.readRange(session)).map((r) => r.contentHash);
      const err = await rejectsWithCode(host.placer.suspend(session, signal()), c.code);
      expect(err.message).toContain(c.names);
      expect((await host.journal.readRange(session)).map((r) => r.contentHash)).toEqual(before);
      expect((await host.snapshots.stats()).blobs).toBe(0);
      expect(await turns(host, session, 1)).toEqual(["3"]);
    }
  }, 600_000);

  it("vmGuestsBoundsTheGuestsOfAHarness: past vmGuests a new session's turn is RESOURCE_EXHAUSTED before a guest starts; suspending one makes room", async () => {
    const host = await openTestHost({
      harnesses: [{ name: "pyc", runtime: "vm", target: image, checkpointPolicy: "on-suspend" }],
      limits: { vmGuests: 1 },
    });
    const a = (await host.createSession({ harness: "pyc" })).uid;
    expect(await turns(host, a, 2)).toEqual(["1", "2"]);
    const b = (await host.createSession({ harness: "pyc" })).uid;
    const err = await rejectsWithCode(turns(host, b, 1), ErrorCode.ResourceExhausted);
    expect(err.message).toContain("vmGuests=1");
    await host.placer.suspend(a, signal());
    expect(await turns(host, b, 1)).toEqual(["1"]);
    // a's guest is gone and b's holds the one slot: resuming a is refused the same way, b counts on.
    await rejectsWithCode(turns(host, a, 1), ErrorCode.ResourceExhausted);
    expect(await turns(host, b, 1)).toEqual(["2"]);
  }, 600_000);

  it("vm on a PostgreSQL journal: the whole-VM blob is stored in PostgreSQL and resume continues at N+1; replay re-runs the turns on a fresh guest, journal untouched", async () => {
    const schema = freshSchema();
    schemas.push(schema);
    const host = await openTestHost({
      journal: `${PG_URL}${PG_URL.includes("?") ? "&" : "?"}schema=${schema}`,
      harnesses: [{ name: "pyc", runtime: "vm", target: image, checkpointPolicy: "on-suspend" }],
    });
    const session = (await host.createSession({ harness: "pyc" })).uid;
    expect(await turns(host, session, 2)).toEqual(["1", "2"]);
    const { ref } = await host.placer.suspend(session, signal());
    const db = await rawClient(schema);
    try {
      const rows = await db.query<{ digest: string; size: string }>("SELECT digest, size FROM snapshot_blobs");
      expect(rows.rows.map((r) => r.digest)).toEqual([ref.externalUri]);
      expect(Number(rows.rows[0]?.size)).toBeGreaterThan(1024 * 1024);
    } finally {
      await db.end();
    }
    await host.placer.resume(session, signal());
    expect(await turns(host, session, 1)).toEqual(["3"]);
    const journaled = (await host.journal.readRange(session)).map((r) => r.contentHash);
    const replay = await host.placer.replay(session, signal());
    expect(replay.outputs).toEqual(["1", "2", "3"]);
    expect((await host.journal.readRange(session)).map((r) => r.contentHash)).toEqual(journaled);
    expect(await turns(host, session, 1)).toEqual(["4"]); // the live guest was not disturbed
  }, 600_000);
});
