// Health tells the truth about the journal. Invariant: once any Sessions call fails because the
// journal's storage cannot be read (isJournalUnreadable), the host reports NOT_SERVING until it is
// restarted on a readable journal, and that call's status is DATA_LOSS (never INTERNAL).
import { ErrorCode, HostError } from "../errors/index.js";
import { isJournalUnreadable } from "../journal/unreadable.js";

type AnyFn = (...args: unknown[]) => unknown;

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === "object" && value !== null && Symbol.asyncIterator in value && !(value instanceof Promise);
}

/** The service implementation with every method's journal-unreadable failures reported to `onUnreadable`. */
export function withJournalHealth<T extends object>(impl: T, onUnreadable: (err: unknown) => void): T {
  const mapped = (err: unknown): unknown => {
    if (!isJournalUnreadable(err)) return err;
    onUnreadable(err);
    if (err instanceof HostError) return err;
    const message = err instanceof Error ? err.message : String(err);
    return new HostError(ErrorCode.DataLoss, `the journal cannot be read (${message}); the host reports NOT_SERVING`, {
      cause: err,
    });
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
      if (isAsyncIterable(result)) {
        const source = result;
        return (async function* () {
          try {
            yield* source;
          } catch (err) {
            throw mapped(err);
          }
        })();
      }
      return result;
    };
  }
  return out as T;
}
