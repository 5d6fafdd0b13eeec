// vm_boot_ms and the vm runtime's other costs, on the accelerator this machine gets (named
// in the details): a cold boot of the reference Python counter image (vm_node_*: the Node counter
// image, `image build --node`) until its harness answers Describe; a whole-VM snapshot (suspend of a live session into the blob store) and the blob's size;
// restore-to-first-turn (resume in a fresh QEMU, then one turn); a fork of 3 children until every
// child answered its first turn. Runs only with `--vm` (it boots QEMU guests: minutes under TCG).
// Invariant: every turn's answer is checked (the counter continues: N+1 after restore, in every
// child), or the figure crashes instead of reporting a number.
import { statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Host } from "../../src/host/host.js";
import { textMessage } from "../../src/model/text.js";
import { Unavailable } from "../lib/lazy.js";
import { median, round, sampleOf } from "../lib/stats.js";
import { scratchDir } from "../lib/tmp.js";
import type { Figure, FigureResult, RunOptions } from "../lib/types.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const HARNESS = "counter";

/** Which reference image a vm figure measures, and the prefix of its keys. */
interface Variant {
  readonly prefix: "vm" | "vm_node";
  readonly source: { python: string; includes: string[] } | { node: string; includes: string[] };
}

async function turn(host: Host, session: string, expected: number): Promise<void> {
  const r = await host.placer.exec({
    session,
    inputs: [textMessage("user", "tick")],
    signal: new AbortController().signal,
  });
  if (r.outputs[0] !== String(expected))
    throw new Error(`session ${session} answered ${JSON.stringify(r.outputs[0])}, expected ${expected}`);
}

async function run(variant: Variant, opts: RunOptions): Promise<FigureResult> {
  if (!opts.vm) throw new Unavailable("run with `npm run bench -- --vm` (boots QEMU guests; minutes under TCG)");
  const { qemuAvailable, chooseAccel } = await import("../../src/vm/accel.js");
  const qemu = qemuAvailable();
  if (!qemu.ok) throw new Unavailable(qemu.reason);
  const { buildImage } = await import("../../src/vm/image-build.js");
  const { openImage } = await import("../../src/vm/image-manifest.js");
  const { VmProcess } = await import("../../src/vm/qemu.js");
  const { Host } = await import("../../src/host/host.js");
  const { newSessionUid } = await import("../../src/controller/ids.js");
  const scratch = scratchDir("vm");
  const reps = opts.quick ? 1 : 3;
  try {
    const built = await buildImage({ ...variant.source, args: [], out: scratch.file("image") });
    const image = await openImage(built.out);
    const accel = chooseAccel();

    // Cold boot to the first Describe answer, and the raw snapshot of that fresh guest.
    const boots: number[] = [];
    for (let i = 0; i < (opts.quick ? 1 : 2); i++) {
      const t0 = performance.now();
      const vm = await VmProcess.start(image, accel, { kind: "boot" });
      boots.push(performance.now() - t0);
      await vm.stop();
    }

    const host = await Host.open({
      dataDir: scratch.file("data"),
      harnesses: [{ name: HARNESS, runtime: "vm", target: built.out, checkpointPolicy: "on-suspend" }],
    });
    const signal = new AbortController().signal;
    const suspends: number[] = [];
    const restores: number[] = [];
    const blobs: number[] = [];
    const forks: number[] = [];
    try {
      const session = (await host.createSession({ harness: HARNESS })).uid;
      let count = 0;
      await turn(host, session, ++count); // the first use boots the base snapshot
      for (let i = 0; i < reps; i++) {
        await turn(host, session, ++count);
        const s0 = performance.now();
        const { ref } = await host.placer.suspend(session, signal);
        suspends.push(performance.now() - s0);
        blobs.push((await host.snapshots.get(ref.externalUri)).length);
        const r0 = performance.now();
        await host.placer.resume(session, signal);
        await turn(host, session, ++count);
        restores.push(performance.now() - r0);
      }
      for (let i = 0; i < (opts.quick ? 1 : 2); i++) {
        const metas = Array.from({ length: 3 }, () => ({ uid: newSessionUid(), project: "default", harness: HARNESS }));
        const f0 = performance.now();
        await host.placer.fork({ parent: session, atSeq: 0, children: metas, signal });
        await Promise.all(metas.map((m) => turn(host, m.uid, count + 1)));
        forks.push(performance.now() - f0);
        const runtime = host.registry.resolve(HARNESS).runtime;
        await Promise.all(metas.map((m) => runtime.stop(m.uid)));
        await host.placer.resume(session, signal).catch(() => undefined);
      }
    } finally {
      await host.close();
    }
    const details = {
      accelerator: accel.accel,
      accelerator_reason: accel.reason,
      qemu: qemu.version,
      image_initrd_bytes: image.manifest.initrd.bytes,
      image_kernel_bytes: statSync(image.kernelPath).size,
      guest_memory_mb: image.manifest.memoryMb,
    };
    return {
      status: "ok",
      value: round(median(boots)),
      unit: "ms",
      measured: sampleOf(boots, "ms"),
      details,
      also: {
        [`${variant.prefix}_snapshot_ms`]: {
          value: round(median(suspends)),
          unit: "ms",
          measured: sampleOf(suspends, "ms"),
        },
        [`${variant.prefix}_restore_first_turn_ms`]: {
          value: round(median(restores)),
          unit: "ms",
          measured: sampleOf(restores, "ms"),
        },
        [`${variant.prefix}_fork3_ms`]: {
          value: round(median(forks)),
          unit: "ms",
          measured: sampleOf(forks, "ms"),
          details: { per_child_ms: round(median(forks) / 3) },
        },
        [`${variant.prefix}_blob_bytes`]: { value: median(blobs), unit: "bytes", measured: sampleOf(blobs, "bytes") },
      },
    };
  } finally {
    scratch.dispose();
  }
}

function vmFigure(variant: Variant, what: string): Figure {
  const p = variant.prefix;
  return {
    key: `${p}_boot_ms`,
    extraKeys: [`${p}_snapshot_ms`, `${p}_restore_first_turn_ms`, `${p}_fork3_ms`, `${p}_blob_bytes`],
    title: `vm runtime (${what}): cold boot, whole-VM snapshot, restore to first turn, fork of 3, blob size`,
    run: (opts) => run(variant, opts),
  };
}

export const vmRuntime = vmFigure(
  {
    prefix: "vm",
    source: {
      python: join(ROOT, "harnesses/python/counter_node.py"),
      includes: [join(ROOT, "harnesses/python/hhsdk")],
    },
  },
  "Python counter",
);

/** The Node counter image; not in `--vm`'s default selection (name it with `--only vm_node_boot_ms`). */
export const vmNodeRuntime = vmFigure(
  { prefix: "vm_node", source: { node: join(ROOT, "harnesses/node/counter_node.mjs"), includes: [] } },
  "Node counter",
);
