// The REQUIRES_MEMORY_SNAPSHOT checks (docs/conformance.md, "Memory tier"): the harness's state lives in RAM and must survive
// only through memory snapshots. Invariant: every continuity check compares the subject against the
// uninterrupted control twin, names the cold-boot / double-apply signature when it sees one, and
// verifies the chain of every session it touched across suspend, resume and fork boundaries.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { textMessage } from "../../controller/events.js";
import { ErrorCode } from "../../errors/index.js";
import type { Host } from "../../host/host.js";
import { ownsProcesses } from "../../runtime/types.js";
import { parseDigest } from "../../snapshot/store.js";
import type { SuiteEnv } from "../env.js";
import { errText, fail, short } from "../evidence.js";
import { SUBJECT, SUBJECT_LOCAL } from "../target.js";
import {
  continuesLikeControl,
  forkSubject,
  nextTurnContinues,
  sessionAfterTurns,
  expectRefusal,
  journalState,
  pass,
  skip,
  unchanged,
  type Check,
} from "./check.js";
import { describeCheck } from "./describe.js";

async function suspendWithMemory(env: SuiteEnv, host: Host, uid: string): Promise<{ seq: number; digest: string }> {
  const { record, ref } = await host.placer.suspend(uid, env.signal());
  if (!ref.memory || ref.externalUri === "")
    fail(`suspend at seq ${record.seq} produced no memory snapshot (ref ${JSON.stringify(ref)})`);
  return { seq: record.seq, digest: ref.externalUri };
}

const refusedOnFilesystem: Check = {
  id: "memory.refused-on-filesystem",
  tier: "memory",
  title: "Exec on a filesystem-only runtime is refused before anything is journaled",
  async run(env) {
    if (env.target.kind === "address")
      return skip("the target is a running node: the suite cannot load it onto the in-process filesystem-only runtime");
    if (env.target.kind === "vm")
      return skip(
        "the target is a vm image: its harness runs only inside a guest, not in-process on the filesystem-only runtime",
      );
    const host = await env.shared();
    const uid = await env.newSession(host, SUBJECT_LOCAL);
    const before = await journalState(host, uid);
    const refusal = await expectRefusal("exec on the local (filesystem-only) runtime", ErrorCode.Unplaceable, () =>
      env.turn(host, uid, 1),
    );
    const journal = unchanged("the refused exec", before, await journalState(host, uid), { fence: true });
    return pass(`refused: ${refusal}; ${journal}`);
  },
};

const restoreContinues: Check = {
  id: "memory.restore-continues",
  tier: "memory",
  title: "N turns, suspend, resume: the next turn continues like the control",
  async run(env) {
    const { host, uid } = await sessionAfterTurns(env);
    const fenceBefore = await host.journal.currentFence(uid);
    const snap = await suspendWithMemory(env, host, uid);
    const resumed = await host.placer.resume(uid, env.signal());
    const next = await env.turn(host, uid, env.turns + 1);
    const cont = await continuesLikeControl(env, env.turns + 1, next.text);
    const fenceAfter = await host.journal.currentFence(uid);
    if (fenceAfter <= fenceBefore)
      fail(`the restored incarnation's fence ${fenceAfter} does not supersede the suspended one's ${fenceBefore}`);
    const chain = await env.verifyChains(host, [uid]);
    return pass(
      `SUSPEND at seq ${snap.seq} (snapshot ${short(snap.digest)}), RESUME at seq ${resumed.record.seq}, fence ${fenceBefore}→${fenceAfter}; ${cont}; ${chain}`,
    );
  },
};

const restoreAfterKill: Check = {
  id: "memory.restore-after-node-kill",
  tier: "memory",
  title: "After the node process is killed, the session is restored into a new process and continues",
  async run(env) {
    if (env.target.kind === "address")
      return skip("the target node is not owned by the suite's host, so it cannot be killed and replaced");
    const host = await env.openHost();
    try {
      const runtime = host.registry.resolve(SUBJECT).runtime;
      if (!ownsProcesses(runtime))
        return skip(`the subject runs on the ${runtime.name} runtime, which has no node process to kill`);
      // The spawned runtime's actor lives in a harness node process; the vm runtime's in a QEMU process.
      const what = runtime.name === "vm" ? "QEMU" : "node";
      const uid = await env.newSession(host);
      await env.drive(host, uid, env.range(env.turns));
      const node = runtime.processOf(uid);
      if (!node) fail(`no live ${what} process serves the session after its turns`);
      const exited = node.exited;
      node.kill();
      await exited;
      const next = await env.turn(host, uid, env.turns + 1);
      const now = runtime.processOf(uid);
      if (!now || now.pid === node.pid)
        fail(`the session did not move to a new ${what} process (pid ${node.pid} → ${now?.pid ?? "none"})`);
      const cont = await continuesLikeControl(env, env.turns + 1, next.text);
      const chain = await env.verifyChains(host, [uid]);
      return pass(
        `${what} pid ${node.pid} killed (SIGKILL) after ${env.turns} turns; restored from the every-turn checkpoint into pid ${now.pid}; ${cont}; ${chain}`,
      );
    } finally {
      await env.closeHost(host);
    }
  },
};

const forkChildren: Check = {
  id: "memory.fork-children",
  tier: "memory",
  title: "k children forked from one checkpoint each continue like the control, independently; the parent resumes",
  async run(env) {
    const { host, uid: parent } = await sessionAfterTurns(env);
    const k = env.options.forks;
    const uids = Array.from({ length: k }, () => env.childUid());
    const { atSeq } = await forkSubject(env, host, parent, 0, uids);
    const parentRecs = await host.journal.readRange(parent);
    const checkpoint = parentRecs.find((r) => r.seq === atSeq + 1);
    const ckpt = checkpoint?.event.body.case === "lifecycle" ? checkpoint.event.body.value.snapshotExternalUri : "";
    for (const uid of uids) {
      const recs = await host.journal.readRange(uid);
      for (let s = 0; s < atSeq; s++) {
        if (recs[s]?.contentHash !== parentRecs[s]?.contentHash)
          fail(`child ${uid} record ${s + 1} hash differs from the parent's`);
      }
    }
    const n = env.turns;
    for (const [c, uid] of uids.entries()) {
      const t = await env.turn(host, uid, n + 1);
      await continuesLikeControl(env, n + 1, t.text, `child ${c + 1}: `);
    }
    let independence = "one child: independence not exercised";
    if (k >= 2) {
      for (const [c, uid] of uids.entries()) {
        const t = await env.turn(host, uid, n + 2);
        await continuesLikeControl(env, n + 2, t.text, `child ${c + 1} (after its siblings' turns): `);
      }
      independence = `each child's second turn answered turn ${n + 2} = control, unaffected by its siblings`;
    }
    await host.placer.resume(parent, env.signal());
    const p = await env.turn(host, parent, n + 1);
    const parentCont = await continuesLikeControl(env, n + 1, p.text, "parent after resume: ");
    const chain = await env.verifyChains(host, [parent, ...uids]);
    return pass(
      `${k} children forked at seq ${atSeq} from one checkpoint ${short(ckpt)}; prefix hashes equal; each answered turn ${n + 1} ${JSON.stringify(await env.expected(n + 1))} = control; ${independence}; ${parentCont}; ${chain}`,
    );
  },
};

/**
 * The input a subject answers with one output `random:<value>` drawn through its per-copy randomness API;
 * a value of several space-separated draws (`random:uuid=… math=…`, one per generator the subject
 * offers) is compared draw by draw, so one generator that repeats fails even when the others differ.
 */
export const RANDOM_PROBE = "random";

/** The draws of a probe answer (`random:` stripped) that are the same in both children. */
export function repeatedDraws(a: string, b: string): string[] {
  const wordsOf = (s: string) => s.slice(RANDOM_PROBE.length + 1).split(" ");
  const bWords = wordsOf(b);
  return wordsOf(a).filter((w, i) => w === bWords[i]);
}

const forkRandomness: Check = {
  id: "memory.fork-randomness",
  tier: "memory",
  title: "Two children forked from one snapshot draw different random values through the documented per-copy API",
  async run(env) {
    const { host, uid: parent } = await sessionAfterTurns(env);
    const uids = [env.childUid(), env.childUid()];
    const { atSeq } = await forkSubject(env, host, parent, 0, uids);
    const draws: string[] = [];
    for (const uid of uids) {
      const result = await host.placer.exec({
        session: uid,
        inputs: [textMessage("user", RANDOM_PROBE)],
        signal: env.signal(),
      });
      const text = result.outputs.join("");
      if (!text.startsWith(`${RANDOM_PROBE}:`))
        return skip(
          `the subject does not answer the randomness probe (input ${JSON.stringify(RANDOM_PROBE)} → one output "random:<value>"; docs/conformance.md): it answered ${JSON.stringify(text.slice(0, 80))}`,
        );
      draws.push(text);
    }
    const [first = "", second = ""] = draws;
    const repeated = repeatedDraws(first, second);
    if (repeated.length > 0)
      fail(
        `both children forked at seq ${atSeq} drew ${JSON.stringify(first === second ? first : repeated.join(" "))}: the generator's state was copied with the snapshot (draw per-copy values from the kernel: the SDK's freshRandom*, Python's os.urandom/secrets/uuid4; on vm the guest's Node and Python runtimes are reseeded on every restore)`,
      );
    const chain = await env.verifyChains(host, [parent, ...uids]);
    return pass(`children forked at seq ${atSeq} drew ${draws.map((d) => JSON.stringify(d)).join(" ≠ ")}; ${chain}`);
  },
};

const historicalForkRefused: Check = {
  id: "memory.historical-fork-refused",
  tier: "memory",
  title: "A fork at a historical seq is refused with no side effects, and the session continues",
  async run(env) {
    const { host, uid, turns } = await sessionAfterTurns(env);
    const atSeq = turns.at(-2)!.result.records.at(-1)!.seq;
    const before = await journalState(host, uid);
    const child = env.childUid();
    const refusal = await expectRefusal(`fork at historical seq ${atSeq}`, ErrorCode.Unplaceable, () =>
      forkSubject(env, host, uid, atSeq, [child]),
    );
    const journal = unchanged("the refused fork", before, await journalState(host, uid), { fence: true });
    if ((await host.journal.getSession(child)) !== undefined) fail(`the refused fork created child session ${child}`);
    const continued = await nextTurnContinues(env, host, uid);
    return pass(`fork at seq ${atSeq} (head ${before.head}) refused: ${refusal}; ${journal}; no child; ${continued}`);
  },
};

const corruptSnapshot: Check = {
  id: "memory.corrupt-snapshot-refused",
  tier: "memory",
  title: "A corrupt snapshot is refused and the session stays suspended, resumable from a good copy",
  async run(env) {
    const { host, uid } = await sessionAfterTurns(env);
    const snap = await suspendWithMemory(env, host, uid);
    const good = await host.snapshots.get(snap.digest);
    const hex = parseDigest(snap.digest);
    const file = join(env.snapshotDir(env.dataDirOf(host)), "sha256", hex.slice(0, 2), hex);
    const corrupt = Uint8Array.from(good, (b, i) => (i === good.length >> 1 ? b ^ 0xff : b));
    try {
      await writeFile(file, corrupt);
    } catch (err) {
      fail(`cannot corrupt the snapshot blob at ${file}: ${errText(err)}`);
    }
    const before = await journalState(host, uid);
    const refusal = await expectRefusal("resume from a corrupt snapshot", ErrorCode.DataLoss, () =>
      host.placer.resume(uid, env.signal()),
    );
    const journal = unchanged("the refused resume", before, await journalState(host, uid));
    const state = (await host.getSession(uid)).computeState;
    if (state !== "COLD") fail(`after the refused resume the session is ${state}, not COLD (suspended)`);
    await host.snapshots.put(good);
    await host.placer.resume(uid, env.signal());
    const continued = await nextTurnContinues(env, host, uid);
    return pass(
      `snapshot ${short(snap.digest)} corrupted (1 byte flipped): resume refused: ${refusal}; ${journal}; session still COLD; after restoring a good copy: ${continued}`,
    );
  },
};

export const memoryChecks: readonly Check[] = [
  describeCheck("memory"),
  refusedOnFilesystem,
  restoreContinues,
  restoreAfterKill,
  forkChildren,
  forkRandomness,
  historicalForkRefused,
  corruptSnapshot,
];
