// The Placer: the one entry to session operations — Exec, Resume, Suspend, Fork, Approve, Upgrade,
// Cancel, Delete and Replay (docs/protocol.md §7). A thin facade: each operation lives in its own
// module (exec.ts, resume.ts, suspend.ts, fork.ts, approve.ts, upgrade.ts, cancel.ts) over the one
// "session under lock and fence" helper (locked-session.ts) and the state they share
// (placement-state.ts); actors are chosen and recovered in actor-recovery.ts. Invariants kept there:
// a refusal (CanPlace, descriptor mismatch, busy session) happens before any compute is created or
// anything is journaled; every write is under a fence minted for it; a memory actor receives no
// history its state already holds (I4) and its lost RAM is reported, never silently restarted; effects
// emitted during an operation are dispatched after it released the session. Here: each operation's
// span and latency metric.
import type { ApprovalDecision } from "../controller/approvals.js";
import { replaySession, type ReplayResult, type TurnObserver, type TurnResult } from "../controller/index.js";
import type { SessionLog } from "../projection/session-log.js";
import type { SessionInfo } from "../journal/types.js";
import type { OpContext } from "../obs/context.js";
import { traced } from "../obs/trace.js";
import { ActorRecovery } from "./actor-recovery.js";
import { approveOp } from "./approve.js";
import { cancelOp, deleteOp } from "./cancel.js";
import type { ChainCheck } from "./chain-check.js";
import type { CheckpointHealth } from "./checkpoint-health.js";
import { execOp } from "./exec.js";
import { forkOp } from "./fork.js";
import type { HistoryCache } from "./history-cache.js";
import { measured } from "./op-metrics.js";
import type { OperationContext } from "./operation-context.js";
import type {
  ApproveResult,
  CancelOutcome,
  CancelRequest,
  ExecRequest,
  ForkRequest,
  ForkResult,
  PlacerDeps,
  ResumeResult,
  SuspendResult,
  UpgradeResult,
} from "./operation-types.js";
import { PlacementState } from "./placement-state.js";
import type { RecordCache } from "./record-cache.js";
import { resumeOp } from "./resume.js";
import type { SessionGuard } from "./session-guard.js";
import { suspendOp } from "./suspend.js";
import { TurnCheckpoints } from "./turn-checkpoints.js";
import { upgradeOp } from "./upgrade.js";

export { CANCEL_WAIT_MS } from "./placement-state.js";
export type * from "./operation-types.js";

export class Placer {
  readonly guard: SessionGuard;
  readonly history: HistoryCache;
  /** Whole-session records for suspend, resume, approvals and recovery (byte-bounded). */
  readonly records: RecordCache;
  /** Tamper check: the chain is verified before any operation runs on it (DATA_LOSS otherwise). */
  readonly chain: ChainCheck;
  /** Per-turn checkpoint failures (counted, logged as warn, served by GetSession). */
  readonly checkpointHealth: CheckpointHealth;
  private readonly state: PlacementState;
  private readonly op: OperationContext;

  constructor(deps: PlacerDeps) {
    const state = new PlacementState(deps);
    const checkpoints = new TurnCheckpoints(state);
    this.state = state;
    this.op = { state, actors: new ActorRecovery(state, checkpoints), checkpoints };
    this.guard = state.guard;
    this.history = state.history;
    this.records = state.records;
    this.chain = state.chain;
    this.checkpointHealth = state.checkpointHealth;
  }

  /** Runs one turn. */
  async exec(req: ExecRequest): Promise<TurnResult> {
    return traced(
      "harnesshost.turn",
      () => ({ "harnesshost.session": req.session, "harnesshost.operation": "exec" }),
      () => execOp(this.op, req),
    );
  }

  /** Re-drives an interrupted turn (if any) and records RESUME. */
  /** `expectedLastSeq` (Exec's recovery of a decided turn): refused Conflict unless it is the head under the lock. */
  async resume(
    session: string,
    outer: AbortSignal,
    observer?: TurnObserver,
    ctx?: OpContext,
    expectedLastSeq?: number,
  ): Promise<ResumeResult> {
    return measured(this.state.deps.metrics, "resume", () =>
      traced(
        "harnesshost.turn",
        () => ({ "harnesshost.session": session, "harnesshost.operation": "resume" }),
        () => resumeOp(this.op, session, outer, { observer, ctx, expectedLastSeq }),
      ),
    );
  }

  /** Snapshots the session's compute and records SUSPEND carrying the ref; frees the actor. */
  async suspend(session: string, signal: AbortSignal, ctx?: OpContext): Promise<SuspendResult> {
    return measured(this.state.deps.metrics, "suspend", () =>
      traced(
        "harnesshost.suspend",
        () => ({ "harnesshost.session": session }),
        () => suspendOp(this.op, session, signal, ctx),
      ),
    );
  }

  /** Branches the session at a seq into children (docs/protocol.md §7.3). */
  async fork(req: ForkRequest): Promise<ForkResult> {
    return measured(this.state.deps.metrics, "fork", () =>
      traced(
        "harnesshost.fork",
        () => ({
          "harnesshost.session": req.parent,
          "harnesshost.fork.at_seq": req.atSeq,
          "harnesshost.fork.children": req.children.length,
        }),
        () => forkOp(this.op, req),
      ),
    );
  }

  /**
   * Commits an approval decision (or an answer) for the exact gate tuple: only APPROVAL_RESULT, under
   * a fresh fence at the head; an exact retry returns the committed record. Never runs or resumes anything.
   */
  async approve(session: string, decision: ApprovalDecision, ctx?: OpContext): Promise<ApproveResult> {
    return measured(this.state.deps.metrics, "approve", () =>
      traced(
        "harnesshost.approve",
        () => ({ "harnesshost.session": session, "harnesshost.approved": decision.approved }),
        () => approveOp(this.state, session, decision, ctx),
      ),
    );
  }

  /** Moves a session to another version of its harness (docs/versioning.md; see upgrade.ts). */
  async upgrade(session: string, toVersion: string, signal: AbortSignal, ctx?: OpContext): Promise<UpgradeResult> {
    return upgradeOp(this.state, session, toVersion, signal, ctx);
  }

  /** Cancels the session's turn or withdraws its parked wait (docs/protocol.md §17; see cancel.ts). */
  async cancel(req: CancelRequest): Promise<CancelOutcome> {
    return cancelOp(this.state, req);
  }

  /**
   * Deletes the session for good (docs/protocol.md §18): refused (ABORTED) while any operation holds it
   * here or on another host — cancel a running turn first. Resolves to the session as it was.
   */
  async delete(session: string, ctx?: OpContext): Promise<SessionInfo> {
    return deleteOp(this.state, session, ctx);
  }

  /**
   * Re-executes the session's completed turns on a fresh, session-less harness instance. A tampered chain is
   * refused (DATA_LOSS naming the first bad seq) before any harness runs, as for Exec (docs/protocol.md §5.7).
   */
  async replay(session: string, signal: AbortSignal): Promise<ReplayResult> {
    const { state } = this;
    const info = await state.session(session);
    await state.verify(session);
    const entry = await state.resolveHarness(info.harness, await this.sessionLog(session), info);
    const descriptor = await entry.runtime.describe(signal);
    const eph = await entry.runtime.ephemeral();
    try {
      return await replaySession(
        { journal: state.deps.journal },
        { session, binding: { harness: eph.harness, name: entry.name, descriptor }, signal, turnMs: state.turnMs },
      );
    } finally {
      await eph.release();
    }
  }

  /**
   * The session's row for a view or an edge check, read once: NOT_FOUND when it does not exist or lies
   * outside the caller's projects (`ctx.projects`, docs/protocol.md §19) — the one project check.
   */
  async session(uid: string, ctx?: OpContext): Promise<SessionInfo> {
    return this.state.session(uid, ctx);
  }

  /** The session's log projection (from the cached record window; for views, no session hold). */
  async sessionLog(session: string): Promise<SessionLog> {
    return (await this.records.window(this.state.deps.journal, session)).log;
  }

  /** The build digest this host serves for `version` of `harness` ("" unknown; docs/versioning.md). */
  buildDigest(harness: string, version: string): string {
    return this.state.deps.harnesses.resolveVersion?.(harness, version)?.runtime.buildDigest?.() ?? "";
  }

  /** Resolves once every verified-position store started so far has finished (or failed). */
  async positionsIdle(): Promise<void> {
    return this.state.positions.idle();
  }

  /** Resolves once every effect dispatched so far has run (or failed). */
  async effectsIdle(): Promise<void> {
    return this.state.effects.idle();
  }
}
