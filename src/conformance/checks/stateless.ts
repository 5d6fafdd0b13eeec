// The STATELESS_REPLAY checks (docs/conformance.md, "Stateless tier"): the journal must be the harness's whole state. Invariant:
// every continuity check compares the subject against the uninterrupted control twin and verifies the
// chain of every session it touched, across suspend, resume, restart and fork boundaries.
import { EventKind, Lifecycle_Kind } from "../../gen/agentsessions/v1/common_pb.js";
import { ErrorCode, isHostError } from "../../errors/index.js";
import type { JournalRecord } from "../../journal/types.js";
import { SUBJECT } from "../target.js";
import { errText, fail, q, short, turnText } from "../evidence.js";
import {
  continuesLikeControl,
  forkSubject,
  nextTurnContinues,
  sessionAfterTurns,
  journalState,
  pass,
  skip,
  unchanged,
  type Check,
} from "./check.js";
import { compactionWindow } from "./compaction.js";
import { describeCheck } from "./describe.js";

function endSeq(records: readonly JournalRecord[]): number {
  return records.at(-1)?.seq ?? 0;
}

const liveTurns: Check = {
  id: "stateless.live-turns-chain",
  tier: "stateless",
  title: "N live turns complete and the chain verifies",
  async run(env) {
    const { host, uid, turns } = await sessionAfterTurns(env);
    for (const [k, t] of turns.entries()) {
      const last = t.result.records.at(-1);
      if (last?.event.kind !== EventKind.EVENT_END)
        fail(`turn ${k + 1} did not end with END (last record ${last ? EventKind[last.event.kind] : "none"})`);
    }
    const chain = await env.verifyChains(host, [uid]);
    const head = (await host.journal.head(uid)).hash;
    return pass(
      `${turns.length} turns completed (outputs ${turns.map((t) => q(t.text)).join(", ")}); ${chain}; head ${short(head)}`,
    );
  },
};

const replay: Check = {
  id: "stateless.replay-byte-identical",
  tier: "stateless",
  title: "Replay is byte-identical, makes zero model calls and leaves the journal unchanged",
  async run(env) {
    const { host, uid, turns } = await sessionAfterTurns(env);
    const live = turns.flatMap((t) => t.result.outputs);
    const before = await journalState(host, uid);
    const calls = env.model.calls;
    let outputs: readonly string[];
    try {
      outputs = (await host.placer.replay(uid, env.signal())).outputs;
    } catch (err) {
      const i0 = isHostError(err, ErrorCode.Diverged) && /model input hash mismatch|I0/.test(err.message);
      if (i0)
        fail(
          `I0 violated: on replay the harness sent a different model request than the one recorded live — its model input is not a pure function of the journal (${errText(err)})`,
        );
      if (isHostError(err, ErrorCode.Diverged))
        fail(
          `replay on a fresh instance diverged from the journal — the harness's behaviour depends on state outside the journal (${errText(err)})`,
        );
      fail(`replay failed: ${errText(err)}`);
    }
    const replayCalls = env.model.calls - calls;
    if (replayCalls !== 0) fail(`model calls during replay: ${replayCalls} (want 0)`);
    const same = outputs.length === live.length && outputs.every((o, k) => o === live[k]);
    if (!same) fail(`replay outputs differ: live [${live.map(q).join(", ")}] replayed [${outputs.map(q).join(", ")}]`);
    const journal = unchanged("replay", before, await journalState(host, uid));
    const chain = await env.verifyChains(host, [uid]);
    return pass(`${outputs.length} outputs identical; model calls during replay: 0; ${journal}; ${chain}`);
  },
};

const restart: Check = {
  id: "stateless.restart-continues",
  tier: "stateless",
  title: "A fresh incarnation after a host restart continues like the control",
  async run(env) {
    const dir = env.newDataDir();
    const first = await env.openHost(dir);
    const uid = await env.newSession(first);
    await env.drive(first, uid, env.range(env.turns));
    // Free the actor explicitly: a remote node outlives the host, and a restart must give a fresh instance.
    await first.registry.resolve(SUBJECT).runtime.stop(uid);
    await env.closeHost(first);
    const second = await env.openHost(dir);
    try {
      const next = await env.turn(second, uid, env.turns + 1);
      const cont = await continuesLikeControl(env, env.turns + 1, next.text);
      const chain = await env.verifyChains(second, [uid]);
      return pass(
        `host closed after ${env.turns} turns and reopened on the same data dir (fresh incarnation); ${cont}; ${chain}`,
      );
    } finally {
      await env.closeHost(second);
    }
  },
};

const historicalFork: Check = {
  id: "stateless.historical-fork",
  tier: "stateless",
  title: "A fork at a historical seq shares the prefix, continues like the control, and leaves the parent untouched",
  async run(env) {
    const { host, uid: parent, turns } = await sessionAfterTurns(env);
    const atSeq = endSeq(turns[0]!.result.records); // END of turn 1: historical, since N ≥ 2
    const before = await journalState(host, parent);
    const child = env.childUid();
    await forkSubject(env, host, parent, atSeq, [child]);
    const childRecs = await host.journal.readRange(child);
    for (let k = 0; k < atSeq; k++) {
      if (childRecs[k]?.contentHash !== before.hashes[k])
        fail(
          `child record ${k + 1} hash ${short(childRecs[k]?.contentHash ?? "missing")} differs from the parent's ${short(before.hashes[k]!)}`,
        );
    }
    const marker = childRecs[atSeq];
    const lc = marker?.event.body.case === "lifecycle" ? marker.event.body.value : undefined;
    if (lc?.kind !== Lifecycle_Kind.LIFECYCLE_FORK) fail(`child record ${atSeq + 1} is not the FORK marker`);
    const next = await env.turn(host, child, 2);
    const cont = await continuesLikeControl(env, 2, next.text, "child ");
    const untouched = unchanged("the fork and the child's turn", before, await journalState(host, parent));
    const chain = await env.verifyChains(host, [parent, child]);
    return pass(
      `fork at seq ${atSeq} of ${before.head}: ${atSeq} prefix hashes equal, marker ${JSON.stringify(lc.detail)}; ${cont}; parent: ${untouched}; ${chain}`,
    );
  },
};

const suspendResume: Check = {
  id: "stateless.suspend-resume",
  tier: "stateless",
  title: "Suspend then resume continues like the control",
  async run(env) {
    const { host, uid } = await sessionAfterTurns(env);
    const suspended = await host.placer.suspend(uid, env.signal());
    const calls = env.model.calls;
    const resumed = await host.placer.resume(uid, env.signal());
    const resumeCalls = env.model.calls - calls;
    if (resumed.turn !== undefined)
      fail(`resume re-drove a turn although none was interrupted (${resumed.turn.executionId})`);
    if (resumeCalls !== 0) fail(`resume with nothing interrupted made ${resumeCalls} model calls (want 0)`);
    const continued = await nextTurnContinues(env, host, uid);
    return pass(
      `SUSPEND at seq ${suspended.record.seq}, RESUME at seq ${resumed.record.seq} (0 model calls); ${continued}`,
    );
  },
};

const modelCut: Check = {
  id: "stateless.model-cut-redrive",
  tier: "stateless",
  title: "A turn cut after MODEL_CALL is re-driven by resume with exactly one extra model call",
  async run(env) {
    const i = env.turns + 1;
    const control = await env.control();
    const want = control.modelCalls[i - 1] ?? 0;
    if (want === 0)
      return skip(`the harness made no model call in turn ${i} of the control; there is no MODEL_CALL to cut`);
    const { host, uid } = await sessionAfterTurns(env);
    env.model.failNext(1);
    let cutError = "";
    let completed = false;
    try {
      await env.turn(host, uid, i);
      completed = true;
    } catch (err) {
      if (env.model.disarm() > 0) throw err; // failed before reaching the model: not the cut under test
      cutError = errText(err);
    }
    if (completed) {
      env.model.disarm();
      fail(`turn ${i} completed although its model call failed`);
    }
    const records = await host.journal.readRange(uid);
    const calls = records.filter((r) => r.event.kind === EventKind.EVENT_MODEL_CALL);
    const cutAt = calls.at(-1)?.seq ?? 0;
    const answered = records.some((r) => r.seq > cutAt && r.event.kind === EventKind.EVENT_OUTPUT);
    if (cutAt === 0 || answered) fail(`the cut turn left no unanswered MODEL_CALL (${cutError})`);
    const before = env.model.calls;
    let resumed: Awaited<ReturnType<typeof host.placer.resume>>;
    try {
      resumed = await host.placer.resume(uid, env.signal());
    } catch (err) {
      const i0 = isHostError(err, ErrorCode.Diverged) && /model input hash mismatch|I0/.test(err.message);
      fail(
        i0
          ? `I0 violated: the re-driven turn sent a different model request than the recorded MODEL_CALL at seq ${cutAt} (${errText(err)})`
          : `resume failed: ${errText(err)}`,
      );
    }
    const extra = env.model.calls - before;
    if (resumed.turn === undefined) fail("resume found no interrupted turn to re-drive");
    if (extra !== want)
      fail(
        `model calls during the re-drive: ${extra} (want ${want}: the cut call once${want > 1 ? ` plus ${want - 1} later call(s)` : ""})`,
      );
    const cont = await continuesLikeControl(env, i, turnText(resumed.turn.outputs));
    const chain = await env.verifyChains(host, [uid]);
    return pass(
      `cut after MODEL_CALL at seq ${cutAt}; resume re-drove it with ${extra} model call (want ${want}); ${cont}; ${chain}`,
    );
  },
};

export const statelessChecks: readonly Check[] = [
  describeCheck("stateless"),
  liveTurns,
  replay,
  restart,
  historicalFork,
  suspendResume,
  modelCut,
  compactionWindow,
];
