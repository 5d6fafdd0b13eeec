// What every session operation of one Placer shares: the guard and cross-host lock, the fences this
// host minted, the caches, the running turns and the effects. Invariants: a session is held by at most
// one operation here and (shared journals) on all hosts, and a refusal to hold it is ABORTED; every
// write is under a fence minted for it, and a turn reuses this host's fence only while it is still the
// session's current one; every append is told to the chain check and the record cache.
import type { ControllerDeps, TurnObserver } from "../controller/index.js";
import type { SessionLog } from "../projection/session-log.js";
import { ErrorCode, HostError } from "../errors/index.js";
import type { Event } from "../gen/agentsessions/v1/common_pb.js";
import { appendUnderNewFence } from "../journal/fenced-append.js";
import type { Head, JournalRecord, SessionInfo } from "../journal/types.js";
import { DEFAULT_LIMITS } from "../limits/index.js";
import { DEFAULT_NODE_LIMITS } from "../node/limits.js";
import type { OpContext } from "../obs/context.js";
import { type Log, opLogger, silentLog } from "../obs/log.js";
import { ChainCheck } from "./chain-check.js";
import { CheckpointHealth } from "./checkpoint-health.js";
import type { HarnessEntry } from "./harness-entry.js";
import { HistoryCache } from "./history-cache.js";
import { OperationEffects } from "./operation-effects.js";
import type { PlacerDeps } from "./operation-types.js";
import { RecordCache, type RecordWindow } from "./record-cache.js";
import { checkRegistrationBinding } from "./registration-binding.js";
import { RunningTurns } from "./running-turns.js";
import { SessionGuard, type SessionOperation } from "./session-guard.js";
import { maySee, SessionProjects } from "./session-projects.js";
import { VerifiedPositions } from "./verified-positions.js";

/** A missing session, and one outside the caller's projects: the same answer, so existence does not leak. */
function notFound(uid: string): HostError {
  return new HostError(ErrorCode.NotFound, `session ${uid} not found`);
}

/**
 * How long Cancel waits for a cancelled turn to release its session, on this host or on another
 * sharing the journal (ms); past it Cancel answers ABORTED and the caller may retry.
 */
export const CANCEL_WAIT_MS = 10_000;

/** Bound on the fences remembered as this host's (oldest forgotten first; a forgotten one is re-minted). */
const MINTED_REMEMBERED = 100_000;

export class PlacementState {
  readonly guard: SessionGuard;
  readonly history: HistoryCache;
  /** Whole-session records for suspend, resume, approvals and recovery (byte-bounded). */
  readonly records: RecordCache;
  /** Stored verified positions: where a session's first touch starts (docs/protocol.md §5.9). */
  readonly positions: VerifiedPositions;
  /** Tamper check: the chain is verified before any operation runs on it (DATA_LOSS otherwise). */
  readonly chain: ChainCheck;
  /** Per session with a live memory actor on this host: the fence this host minted for it last. */
  readonly actorFence = new Map<string, number>();
  /** Turns running on this host (exec, resume), for Cancel. */
  readonly running: RunningTurns;
  readonly effects: OperationEffects;
  /** Gates (session, request seq) that parked on this host and are not decided yet (the pending gauge). */
  readonly openedHere = new Set<string>();
  /** Per-turn checkpoint failures (counted, logged as warn, served by GetSession). */
  readonly checkpointHealth = new CheckpointHealth();
  readonly turnMs: number;
  readonly cancelWaitMs: number;
  readonly log: Log;
  /** Longest id written whole on a log line (limit logFieldChars). */
  readonly logFieldChars: number;
  private readonly minted = new Map<string, number>();
  /** Each session's project as last read here (the project check of a scoped caller, before any hold). */
  private readonly projects = new SessionProjects();

  constructor(readonly deps: PlacerDeps) {
    this.log = deps.log ?? silentLog;
    this.logFieldChars = deps.limits?.logFieldChars ?? DEFAULT_LIMITS.logFieldChars;
    this.guard = deps.guard ?? new SessionGuard();
    this.running = new RunningTurns(deps.journal);
    this.cancelWaitMs = deps.cancelWaitMs ?? CANCEL_WAIT_MS;
    this.history = deps.history ?? new HistoryCache((deps.limits ?? DEFAULT_LIMITS).historyCacheBytes);
    this.records = new RecordCache((deps.limits ?? DEFAULT_LIMITS).recordCacheBytes);
    this.turnMs = deps.turnMs ?? DEFAULT_NODE_LIMITS.turnMs;
    this.positions = new VerifiedPositions(deps.verifiedPositions ?? {}, this.log, deps.metrics);
    this.chain = new ChainCheck(this.positions);
    this.effects = new OperationEffects(deps.journal, deps.effects, deps.auditTurns === true);
  }

  /** Mints a fence for the session and remembers it as this host's (see turnFence). */
  async mint(session: string): Promise<number> {
    const fence = await this.deps.journal.newFence(session);
    this.rememberMinted(session, fence);
    return fence;
  }

  rememberMinted(session: string, fence: number): void {
    this.minted.set(session, fence);
    if (this.minted.size > MINTED_REMEMBERED) this.minted.delete(this.minted.keys().next().value!);
  }

  /**
   * A turn may keep writing under the fence this host minted last, while it is still the session's
   * current fence: nobody has been authorised to write since, and this host's previous writer is done
   * (it held the session guard). That saves a durable write per turn; any other mint forces a new one.
   */
  async turnFence(info: SessionInfo): Promise<number> {
    if (info.fence > 0 && this.minted.get(info.uid) === info.fence) return info.fence;
    return this.mint(info.uid);
  }

  /**
   * Records the chain check just read and verified (appended by another host since this one last saw
   * the session): the record and history caches extend with them instead of reading them again.
   */
  noteVerified(session: string, records: readonly JournalRecord[]): void {
    this.records.offer(session, records);
    this.history.offer(session, records);
  }

  /** The session's chain verified to its head (DATA_LOSS otherwise), then its record window at that head. */
  async verifiedWindow(session: string, current?: Head): Promise<RecordWindow> {
    return this.records.window(this.deps.journal, session, await this.verify(session, current));
  }

  /**
   * The session's chain verified to its head (DATA_LOSS otherwise); returns the head. What the check
   * reads feeds the caches: another host's new records extend them, and a full walk of a session the
   * record cache does not hold builds its projection on the way (one read of the session, not two).
   * `current`: the head as the caller read it under the session's hold (not read again).
   */
  verify(session: string, current?: Head): Promise<Head> {
    return this.chain.ensure(
      this.deps.journal,
      session,
      {
        verified: (read) => this.noteVerified(session, read),
        walk: () => (this.records.holds(session) ? undefined : this.records.fold(session)),
        seed: () => (this.records.holds(session) ? undefined : (log) => this.records.fold(session, log)),
      },
      current,
    );
  }

  /**
   * At the end of an operation that held the session: stores its verified position when one is due
   * (VerifiedPositions.afterOperation; the write runs in the background).
   */
  afterOperation(session: string): void {
    this.positions.afterOperation(
      this.deps.journal,
      session,
      this.records.peek(session),
      this.chain.verifiedHead(session),
    );
  }

  /** Tells the chain check and the record cache what was appended. */
  noteAppended(session: string, records: readonly JournalRecord[]): void {
    this.chain.noteAppended(session, records);
    this.records.noteAppended(session, records);
  }

  /**
   * Mints a fence and appends `events` under it (plus, for a memory ref, the checkpoint bound to the
   * last) in one durable commit where the journal can; the placement caches learn the records.
   */
  async commitUnderNewFence(
    session: string,
    head: number,
    events: readonly Event[],
    checkpointDigest?: string,
  ): Promise<{ fence: number; records: JournalRecord[] }> {
    const { fence, records } = await appendUnderNewFence(
      this.deps.journal,
      session,
      head,
      events,
      checkpointDigest !== undefined ? { checkpointDigest } : {},
    );
    this.rememberMinted(session, fence);
    this.noteAppended(session, records);
    return { fence, records };
  }

  /** One lifecycle record under a new fence (see commitUnderNewFence). */
  async commitLifecycle(
    session: string,
    head: number,
    event: Event,
    checkpointDigest?: string,
  ): Promise<{ fence: number; record: JournalRecord }> {
    const { fence, records } = await this.commitUnderNewFence(session, head, [event], checkpointDigest);
    return { fence, record: records[0]! };
  }

  /**
   * The local guard, then (shared journals) the cross-host session lock; either refusal is ABORTED.
   * `guarded` runs synchronously once the guard is taken, before the lock's round trip (a turn
   * registers there for Cancel).
   */
  async hold(session: string, op: SessionOperation, guarded?: () => void): Promise<() => Promise<void>> {
    const release = this.guard.acquire(session, op);
    guarded?.();
    const journal = this.deps.journal;
    if (!journal.tryLockSession) return async () => release();
    try {
      const unlock = await journal.tryLockSession(session);
      if (!unlock) throw new HostError(ErrorCode.SessionBusy, `session ${session} is busy on another host`);
      return async () => {
        try {
          await unlock();
        } finally {
          release();
        }
      };
    } catch (err) {
      release();
      throw err;
    }
  }

  /**
   * Resolves a session's harness, first loading it if it was registered on another host sharing the
   * journal: the version the session is pinned to (docs/versioning.md), or the default when it has none.
   */
  async resolveHarness(name: string, log: SessionLog, info: SessionInfo): Promise<HarnessEntry> {
    await this.deps.harnesses.refresh?.(name);
    const resolver = this.deps.harnesses;
    const entry = resolver.resolvePinned
      ? resolver.resolvePinned(name, log.pinnedVersion, info.uid)
      : resolver.resolve(name);
    // A session never runs on a later registration of the key it was created on (a freed name).
    checkRegistrationBinding(entry, info);
    return entry;
  }

  /** Whether another host minted a fence for the session since this host's live actor last ran it. */
  movedOn(info: SessionInfo): boolean {
    const mine = this.actorFence.get(info.uid);
    return mine !== undefined && mine !== info.fence;
  }

  /**
   * The session's row — the one session lookup of every operation and view; NOT_FOUND when it does not
   * exist or lies outside the caller's projects (`ctx.projects`), in the same words either way.
   */
  async session(uid: string, ctx?: OpContext): Promise<SessionInfo> {
    const info = await this.deps.journal.getSession(uid);
    if (!info) throw notFound(uid);
    this.projects.note(uid, info.project);
    if (!maySee(ctx, info.project)) throw notFound(uid);
    return info;
  }

  /**
   * The project check of an operation, made before it holds the session (so a caller of another
   * project never takes, or is refused by, the session's guard): NOT_FOUND outside `ctx.projects`. The
   * session is read only when its project is not already known here.
   */
  async admit(uid: string, ctx: OpContext | undefined): Promise<void> {
    if (ctx?.projects === undefined) return;
    const project = this.projects.get(uid) ?? (await this.session(uid)).project;
    if (!maySee(ctx, project)) throw notFound(uid);
  }

  controller(observer?: TurnObserver, waits: Pick<ControllerDeps, "effects" | "parking"> = {}): ControllerDeps {
    const { journal, model, tools, toolPolicy, modelCalls } = this.deps;
    return {
      journal,
      model,
      ...(tools ? { tools } : {}),
      ...(toolPolicy ? { toolPolicy } : {}),
      ...(modelCalls ? { modelCalls } : {}),
      ...(observer ? { observer } : {}),
      ...waits,
    };
  }

  /**
   * The logger of one operation, made where it starts and handed down to the controller and the
   * runtime: its request id, session, harness and (for a turn) execution id on every line, ids clipped
   * to logFieldChars; free while its levels are off (src/obs/log.ts opLogger).
   */
  opLog(ctx: OpContext | undefined, session: string, harness: string, executionId?: string): Log {
    return opLogger(
      this.log,
      { requestId: ctx?.requestId, session, harness, executionId, actor: ctx?.actor?.principal },
      this.logFieldChars,
    );
  }

  /** This host's live actor of the session (if any) no longer holds its state: forget its fence and history. */
  actorReleased(session: string): void {
    this.actorFence.delete(session);
    this.history.forget(session);
  }

  /** Drops everything this host remembers of a session. */
  forget(session: string): void {
    this.minted.delete(session);
    this.actorFence.delete(session);
    this.history.forget(session);
    this.records.forget(session);
    this.projects.forget(session);
    this.chain.forget(session);
    this.positions.forget(session);
  }
}
