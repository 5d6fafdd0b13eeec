// Health tells the truth about the journal. Invariant: once any Sessions call fails because the
// journal's storage cannot be read (isJournalUnreadable), that call's status is DATA_LOSS (never
// INTERNAL) and the host reports NOT_SERVING; from then on the journal is probed (Journal.probe, a
// pass over the whole store) every JOURNAL_PROBE_MS, and health says SERVING again only once a probe
// reads everything. One probe runs at a time; none runs while the journal is believed readable.
import { ErrorCode, HostError } from "../errors/index.js";
import { isJournalUnreadable } from "../journal/unreadable.js";

/**
 * How often an unreadable journal is probed (ms). A probe is a pass over the whole store, so it is not
 * run more often; an operator who repaired the storage waits at most this long for SERVING.
 */
export const JOURNAL_PROBE_MS = 5_000;

export interface JournalProbeOptions {
  /** Reads the whole journal; rejects while any of it is unreadable. */
  readonly probe: () => Promise<void>;
  /** Called with true when health must say SERVING, false for NOT_SERVING. */
  readonly setServing: (serving: boolean, err?: unknown) => void;
  /** Probe period (ms); default JOURNAL_PROBE_MS. */
  readonly probeMs?: number;
}

/** NOT_SERVING on an unreadable journal, SERVING again once a periodic probe reads all of it. */
export class JournalHealth {
  readonly #opts: JournalProbeOptions;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(opts: JournalProbeOptions) {
    this.#opts = opts;
  }

  /** A call found the journal unreadable. */
  unreadable(err: unknown): void {
    if (this.#stopped) return;
    this.#opts.setServing(false, err);
    this.#schedule();
  }

  /** No more probes (the server is closing). */
  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #schedule(): void {
    if (this.#timer !== undefined || this.#stopped) return;
    this.#timer = setTimeout(() => void this.#probe(), this.#opts.probeMs ?? JOURNAL_PROBE_MS);
    this.#timer.unref();
  }

  async #probe(): Promise<void> {
    let readable = true;
    try {
      await this.#opts.probe();
    } catch {
      readable = false;
    }
    this.#timer = undefined;
    if (this.#stopped) return;
    if (readable) this.#opts.setServing(true);
    else this.#schedule();
  }
}

type AnyFn = (...args: unknown[]) => unknown;

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === "object" && value !== null && Symbol.asyncIterator in value && !(value instanceof Promise);
}

/** The service implementation with every method's journal-unreadable failures reported to `onUnreadable`. */
export function withJournalHealth<T extends object>(impl: T, onUnreadable: (err: unknown) => void): T {
  const mapped = (err: unknown): unknown => {
    if (!isJournalUnreadable(err)) return err;
    onUnreadable(err);
    // A HostError about another failure whose cause was unreadable keeps its own code and message.
    if (err instanceof HostError && err.code !== ErrorCode.StorageUnreadable) return err;
    const message = err instanceof Error ? err.message : String(err);
    return new HostError(
      ErrorCode.StorageUnreadable,
      `the journal cannot be read (${message}); the host reports NOT_SERVING`,
      {
        cause: err,
      },
    );
  };
  const out: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(impl as Record<string, unknown>)) {
    if (typeof fn !== "function") continue;
    const original = (fn as AnyFn).bind(impl);
    out[name] = (...args: unknown[]): unknown => {
      let result: unknown;
      try {
        result = original(...args);
      } catch (err) {
        throw mapped(err);
      }
      if (result instanceof Promise) return result.catch((err: unknown) => Promise.reject(mapped(err)));
      if (isAsyncIterable(result)) return mappingFailures(result, mapped);
      return result;
    };
  }
  return out as T;
}

/**
 * The items of `source` as they come, a failure replaced by `mapped(failure)`; returning early returns
 * the source. A plain iterator, not an async generator around `yield*`: every item of a stream passes
 * through it (one promise per item, not a generator's resumptions).
 */
function mappingFailures<T>(source: AsyncIterable<T>, mapped: (err: unknown) => unknown): AsyncIterable<T> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<T> {
      const it = source[Symbol.asyncIterator]();
      const fail = (err: unknown): never => {
        throw mapped(err);
      };
      return {
        next: () => it.next().catch(fail),
        return: (value?: unknown) =>
          it.return !== undefined ? it.return(value).catch(fail) : Promise.resolve({ done: true, value: value as T }),
      };
    },
  };
}
