// Durable-wait checks (docs/protocol.md §12) for harnesses that declare a REQUIRES_APPROVAL tool, for both tiers.
// Invariant: each check drives the harness through a real host to an approval gate and proves one rule
// with evidence — park/approve/resume continues, denial completes without the tool, an exact retry
// returns the same record, and a parked resume takes zero steps (journal, fence and model untouched).
import { Lifecycle_Kind, Mediation, ToolResult_Code } from "../../gen/agentsessions/v1/common_pb.js";
import { SessionLog } from "../../projection/session-log.js";
import type { ApprovalRef } from "../../controller/approvals.js";
import type { TurnResult } from "../../controller/index.js";
import type { Host } from "../../host/host.js";
import type { SuiteEnv } from "../env.js";
import { fail } from "../evidence.js";
import { SUBJECT } from "../target.js";
import type { Tier } from "../types.js";
import {
  ErrorCode,
  expectRefusal,
  journalState,
  pass,
  skip,
  unchanged,
  type Check,
  type CheckOutcome,
} from "./check.js";

/** Gates resolved in one resume chain before the check gives up (a harness may gate several calls). */
const MAX_GATES = 8;

interface Parked {
  readonly host: Host;
  readonly uid: string;
  readonly ref: ApprovalRef;
}

/** Skips unless the harness declares a REQUIRES_APPROVAL tool; else parks turn 1 of a new session. */
async function parkFirstTurn(env: SuiteEnv): Promise<Parked | CheckOutcome> {
  const d = await env.describe();
  const gated = d.tools.filter((t) => t.mediation === Mediation.REQUIRES_APPROVAL).map((t) => t.name);
  if (gated.length === 0) return skip("the harness declares no REQUIRES_APPROVAL tool");
  const host = await env.shared();
  const uid = await env.newSession(host, SUBJECT);
  const turn = await env.turn(host, uid, 1);
  if (!turn.result.parked)
    return skip(
      `turn 1 reached no approval gate (declared: ${gated.join(", ")}); outputs ${JSON.stringify(turn.result.outputs)}`,
    );
  const last = (await host.journal.readRange(uid)).at(-1);
  const lc = last?.event.body.case === "lifecycle" ? last.event.body.value : undefined;
  if (lc?.kind !== Lifecycle_Kind.LIFECYCLE_SUSPEND)
    fail(`the parked turn was not suspended: the last record (seq ${last?.seq}) is not a SUSPEND`);
  return { host, uid, ref: turn.result.parked };
}

function isParked(p: Parked | CheckOutcome): p is Parked {
  return "ref" in p;
}

/** Decides gates (approve or deny) and resumes until the turn completes. */
async function decideThrough(
  env: SuiteEnv,
  p: Parked,
  approved: boolean,
): Promise<{ turn: TurnResult | undefined; gates: number }> {
  let ref: ApprovalRef | undefined = p.ref;
  let turn: TurnResult | undefined;
  let gates = 0;
  while (ref) {
    if (++gates > MAX_GATES) fail(`the turn parked on more than ${MAX_GATES} gates`);
    await p.host.placer.approve(p.uid, {
      ...ref,
      approved,
      reason: approved ? "conformance: approved" : "conformance: denied",
    });
    const resumed = await p.host.placer.resume(p.uid, env.signal());
    turn = resumed.turn;
    ref = resumed.parked;
  }
  return { turn, gates };
}

function waitsChecks(tier: Tier): Check[] {
  const approveResume: Check = {
    id: `${tier}.waits-approve-resume`,
    tier,
    title: "A gated call parks the turn; approve + resume continues it to END",
    async run(env) {
      const p = await parkFirstTurn(env);
      if (!isParked(p)) return p;
      const { turn, gates } = await decideThrough(env, p, true);
      if (!turn || turn.parked) fail("resume after the approval did not complete the turn");
      const end = turn.records.some((r) => r.event.body.case === "end");
      if (!end) fail(`the resumed turn ${turn.executionId} ended without END`);
      const chain = await env.verifyChains(p.host, [p.uid]);
      return pass(
        `parked at request seq ${p.ref.requestSeq} (call ${p.ref.toolCallId}); ${gates} gate(s) approved; resumed to END with outputs ${JSON.stringify(turn.outputs)}; ${chain}`,
      );
    },
  };
  const deny: Check = {
    id: `${tier}.waits-deny`,
    tier,
    title: "A denied gate completes the turn with an APPROVAL_DENIED receipt",
    async run(env) {
      const p = await parkFirstTurn(env);
      if (!isParked(p)) return p;
      const { turn } = await decideThrough(env, p, false);
      if (!turn || turn.parked) fail("resume after the denial did not complete the turn");
      const records = await p.host.journal.readRange(p.uid);
      const receiptSeq = SessionLog.of(records).gate(p.ref)?.receiptSeq;
      const receipt = receiptSeq === undefined ? undefined : records[receiptSeq - 1];
      const value = receipt?.event.body.case === "result" ? receipt.event.body.value : undefined;
      if (!value || value.code !== ToolResult_Code.APPROVAL_DENIED || !value.isError)
        fail(`no APPROVAL_DENIED receipt for call ${p.ref.toolCallId}`);
      const chain = await env.verifyChains(p.host, [p.uid]);
      return pass(
        `denied at seq ${Number(value.approvalDecisionSeq)}: receipt APPROVAL_DENIED at seq ${receipt!.seq}; turn completed with ${JSON.stringify(turn.outputs)}; ${chain}`,
      );
    },
  };
  const exactRetry: Check = {
    id: `${tier}.waits-exact-retry`,
    tier,
    title: "An exact retry of a decision returns the same record; a changed one is refused",
    async run(env) {
      const p = await parkFirstTurn(env);
      if (!isParked(p)) return p;
      const decision = { ...p.ref, approved: true, reason: "conformance: retry" };
      const first = await p.host.placer.approve(p.uid, decision);
      const before = await journalState(p.host, p.uid);
      const again = await p.host.placer.approve(p.uid, decision);
      if (!again.existing || again.record.contentHash !== first.record.contentHash)
        fail(`the retry committed a new decision at seq ${again.record.seq}`);
      const refusal = await expectRefusal("a changed decision", ErrorCode.FailedPrecondition, () =>
        p.host.placer.approve(p.uid, { ...decision, approved: false }),
      );
      const same = unchanged("the retry and the refused change", before, await journalState(p.host, p.uid));
      return pass(`decision at seq ${first.record.seq}; retry returned it; ${refusal}; ${same}`);
    },
  };
  const zeroSteps: Check = {
    id: `${tier}.waits-parked-resume-zero-steps`,
    tier,
    title: "Resume of a parked session takes zero steps: no model call, no record, no fence",
    async run(env) {
      const p = await parkFirstTurn(env);
      if (!isParked(p)) return p;
      const before = await journalState(p.host, p.uid);
      const calls = env.model.calls;
      const resumed = await p.host.placer.resume(p.uid, env.signal());
      if (!resumed.parked || resumed.turn !== undefined) fail("resume of an undecided gate ran a turn");
      if (env.model.calls !== calls) fail(`the parked resume made ${env.model.calls - calls} model call(s)`);
      const same = unchanged("the parked resume", before, await journalState(p.host, p.uid), { fence: true });
      return pass(`still parked on request seq ${resumed.parked.requestSeq}; 0 model calls; ${same}`);
    },
  };
  return [approveResume, deny, exactRetry, zeroSteps];
}

export const statelessWaitsChecks: readonly Check[] = waitsChecks("stateless");
export const memoryWaitsChecks: readonly Check[] = waitsChecks("memory");
