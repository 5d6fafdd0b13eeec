// Serialises a turn's sink calls and makes failure sticky. Invariant: after one sink call fails, or
// after the turn ended, every later call fails with the same error — catching an error never
// re-authorises effects.
import { ErrorCode, HostError } from "../errors/index.js";

export class SinkGuard {
  private tail: Promise<unknown> = Promise.resolve();
  private failure: unknown;
  private closed = false;

  /** Runs `op` after every earlier call; a failure latches. */
  run<T>(op: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const next = this.tail.then(async () => {
      if (this.failure !== undefined) throw this.failure;
      if (this.closed) throw new HostError(ErrorCode.FailedPrecondition, "sink used after the execution ended");
      if (signal?.aborted) throw signal.reason ?? new HostError(ErrorCode.Cancelled, "cancelled");
      try {
        return await op();
      } catch (err) {
        this.failure ??= err;
        throw err;
      }
    });
    this.tail = next.catch(() => undefined);
    return next;
  }

  /** The latched failure, if any. */
  get failed(): unknown {
    return this.failure;
  }

  fail(err: unknown): void {
    this.failure ??= err;
  }

  async close(): Promise<void> {
    await this.tail;
    this.closed = true;
  }
}

/**
 * The signal one sink call runs under: the caller's and the turn's combined. When the caller passed
 * the turn's own signal (the common case) or none, that signal is used as is — combining a signal
 * with itself aborts at the same moment with the same reason, and AbortSignal.any costs an
 * allocation plus a weak registration on the turn's signal per call.
 */
export function callSignal(caller: AbortSignal | undefined, turn: AbortSignal): AbortSignal {
  return caller === undefined || caller === turn ? turn : AbortSignal.any([caller, turn]);
}
