// The one way a session operation gets at a session: held (the guard here and, on a shared journal,
// the cross-host lock), read, its chain verified to the head that read found, its record window loaded — and, at the
// end, released before its effects are dispatched. Invariants: nothing of the operation runs before
// the hold and the chain check (docs/protocol.md §5.5, §5.7), and nothing — not even the hold — before
// the caller's project check (§19 item 2); a turn registered for Cancel is
// registered only while the session is held, and reported done only after it is released, so a
// Cancel that waited for it finds the session free; effects are dispatched after the release.
import type { EffectBatch } from "../effects/batch.js";
import type { SessionInfo } from "../journal/types.js";
import type { OpContext } from "../obs/context.js";
import type { PlacementState } from "./placement-state.js";
import type { RecordWindow } from "./record-cache.js";
import type { SessionOperation } from "./session-guard.js";

/** A session as an operation sees it while holding it. */
export interface LockedSession {
  readonly uid: string;
  readonly info: SessionInfo;
  readonly window: RecordWindow;
  /** The operation's effects (none without an effect dispatcher), dispatched after the release. */
  readonly batch: EffectBatch | undefined;
  /** The operation's signal: for a turn, also aborted by Cancel. */
  readonly signal: AbortSignal;
}

export interface LockOptions {
  /** The caller's signal; default: one never aborted. */
  readonly signal?: AbortSignal;
  /** Registers the operation as the session's running turn (exec, resume), for Cancel. */
  readonly turn?: boolean;
  /** The call's context: its `projects` are checked before the session is held (NOT_FOUND outside them). */
  readonly ctx?: OpContext | undefined;
}

const NEVER_ABORTED = new AbortController().signal;

export async function withLockedSession<T>(
  state: PlacementState,
  uid: string,
  op: SessionOperation,
  opts: LockOptions,
  body: (session: LockedSession) => Promise<T>,
): Promise<T> {
  await state.admit(uid, opts.ctx);
  const batch = state.effects.batch(uid);
  const release = await state.hold(uid, op);
  const outer = opts.signal ?? NEVER_ABORTED;
  const turn = opts.turn ? state.running.start(uid, outer) : undefined;
  try {
    // One read of the session's row under the hold: its head is the one the chain check verifies to.
    const info = await state.session(uid, opts.ctx);
    const window = await state.verifiedWindow(uid, { seq: info.lastSeq, hash: info.lastHash });
    const result = await body({ uid, info, window, batch, signal: turn?.signal ?? outer });
    state.afterOperation(uid);
    return result;
  } finally {
    await release();
    turn?.done();
    state.effects.dispatch(batch);
  }
}
