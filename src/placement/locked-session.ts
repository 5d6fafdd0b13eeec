// The one way a session operation gets at a session: held (the guard here and, on a shared journal,
// the cross-host lock), read, its chain verified to the head that read found, its record window loaded — and, at the
// end, released before its effects are dispatched. Invariants: nothing of the operation runs before
// the hold and the chain check (docs/protocol.md §5.5, §5.7), and nothing — not even the hold — before
// the caller's project check (§19 item 2); a turn registers for Cancel the moment it takes this host's
// guard, before the cross-host lock's round trip, so no Cancel ever finds the session held by a turn
// that is not yet registered (§17.1 rule 7); a turn cancelled before it holds the session does not
// begin and appends nothing; a turn is reported done only after the release, so a
// Cancel that waited for it finds the session free; effects are dispatched after the release.
import type { EffectBatch } from "../effects/batch.js";
import type { SessionInfo } from "../journal/types.js";
import type { OpContext } from "../obs/context.js";
import type { PlacementState } from "./placement-state.js";
import type { RecordWindow } from "./record-cache.js";
import { type TurnHandle, turnStoppedBeforeItBegan } from "./running-turns.js";
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
  const outer = opts.signal ?? NEVER_ABORTED;
  let turn: TurnHandle | undefined;
  const register = opts.turn
    ? () => {
        turn = state.running.start(uid, outer);
      }
    : undefined;
  let release: () => Promise<void>;
  try {
    release = await state.hold(uid, op, register);
  } catch (err) {
    turn?.done(false);
    throw err;
  }
  let began = false;
  try {
    // Cancelled (or its caller gone) while it waited for the cross-host lock: it does not begin.
    if (turn?.signal.aborted) throw turnStoppedBeforeItBegan(turn.signal.reason);
    began = true;
    // One read of the session's row under the hold: its head is the one the chain check verifies to.
    const info = await state.session(uid, opts.ctx);
    const window = await state.verifiedWindow(uid, { seq: info.lastSeq, hash: info.lastHash });
    const result = await body({ uid, info, window, batch, signal: turn?.signal ?? outer });
    state.afterOperation(uid);
    return result;
  } finally {
    await release();
    turn?.done(began);
    state.effects.dispatch(batch);
  }
}
