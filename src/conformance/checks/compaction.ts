// The compaction check of the stateless tier (docs/conformance.md, docs/protocol.md §16). Invariant: a
// harness that compacts keeps every turn's Start.history bounded — after its first compaction no turn
// receives more than twice the events the largest turn before it did — and a session that ran across
// compactions replays byte-identically with zero model calls and leaves the journal unchanged. A
// harness that never compacts within the probe is skipped with that reason, never failed.
import { compactionOfEvent } from "../../projection/compaction.js";
import { SessionLog } from "../../projection/session-log.js";
import { ErrorCode, isHostError } from "../../errors/index.js";
import { errText, fail, q } from "../evidence.js";
import { journalState, pass, skip, unchanged, type Check } from "./check.js";

/** Turns run looking for a first compaction before the check is skipped. */
export const COMPACTION_PROBE_TURNS = 48;
/** Turns run after the first compaction, to see the window stay bounded. */
export const COMPACTION_FOLLOW_TURNS = 24;

export const compactionWindow: Check = {
  id: "stateless.compaction-window",
  tier: "stateless",
  title: "Turns across a compaction: Start.history stays bounded, replay is identical with zero model calls",
  async run(env) {
    const host = await env.shared();
    const uid = await env.newSession(host);
    const live: string[] = [];
    let i = 1;
    let compacted = false;
    for (; i <= COMPACTION_PROBE_TURNS && !compacted; i++) {
      const t = await env.turn(host, uid, i);
      live.push(...t.result.outputs);
      compacted = t.result.records.some((r) => compactionOfEvent(r.event) !== undefined);
    }
    if (!compacted)
      return skip(
        `no compaction record in ${COMPACTION_PROBE_TURNS} turns: the harness does not compact (docs/protocol.md §16)`,
      );
    for (const n of env.range(COMPACTION_FOLLOW_TURNS, i)) live.push(...(await env.turn(host, uid, n)).result.outputs);
    const records = await host.journal.readRange(uid);
    const log = SessionLog.of(records);
    const first = records.find((r) => compactionOfEvent(r.event) !== undefined)!.seq;
    const execs = log.allExecutions();
    const size = (startSeq: number) => startSeq - 1 - log.historyBase(startSeq);
    const before = Math.max(...execs.filter((e) => e.startSeq < first).map((e) => size(e.startSeq)));
    const after = execs.filter((e) => e.startSeq > first).map((e) => size(e.startSeq));
    const largest = Math.max(...after);
    if (largest > 2 * Math.max(before, 1))
      fail(
        `Start.history not bounded: a turn after the first compaction (seq ${first}) received ${largest} events, more than twice the ${before} of the largest turn before it`,
      );
    const compactions = records.filter((r) => compactionOfEvent(r.event) !== undefined).length;
    const state = await journalState(host, uid);
    const calls = env.model.calls;
    let outputs: readonly string[];
    try {
      outputs = (await host.placer.replay(uid, env.signal())).outputs;
    } catch (err) {
      if (isHostError(err, ErrorCode.Diverged))
        fail(
          `replay across compactions diverged — its turns were not handed the history window they had live (${errText(err)})`,
        );
      fail(`replay failed: ${errText(err)}`);
    }
    if (env.model.calls !== calls) fail(`model calls during replay: ${env.model.calls - calls} (want 0)`);
    if (outputs.length !== live.length || outputs.some((o, k) => o !== live[k]))
      fail(`replay outputs differ: live [${live.map(q).join(", ")}] replayed [${outputs.map(q).join(", ")}]`);
    const journal = unchanged("replay", state, await journalState(host, uid));
    const chain = await env.verifyChains(host, [uid]);
    return pass(
      `${execs.length} turns, ${compactions} compactions (first at seq ${first}); Start.history ≤ ${largest} events after it (≤ ${before} before; full prefix ${records.length}); replay identical, 0 model calls; ${journal}; ${chain}`,
    );
  },
};
