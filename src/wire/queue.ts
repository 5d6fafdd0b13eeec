// An async FIFO between one producer and one consumer. Invariant: items are delivered in order, and an
// end or failure is delivered only after every item queued before it; nothing is dropped silently.
import { ErrorCode, HostError } from "../errors/index.js";

interface Item<T> {
  readonly value: T;
  readonly taken?: { resolve(): void; reject(err: unknown): void };
}

type Closing = { readonly kind: "end" } | { readonly kind: "fail"; readonly error: unknown };

/**
 * `offer` enqueues without waiting; `send` resolves once the consumer has taken the item (backpressure
 * for producers that must not run ahead). `end`/`fail` close the producer side; `return()` (the consumer
 * stopping early) discards the rest and rejects pending and later sends.
 */
export class AsyncQueue<T> implements AsyncIterableIterator<T> {
  readonly #items: Item<T>[] = [];
  readonly #waiters: { resolve(r: IteratorResult<T>): void; reject(err: unknown): void }[] = [];
  #closing: Closing | undefined;
  #discarded: unknown;
  #discardReason: (() => unknown) | undefined;
  #isDiscarded = false;
  /** Called after the consumer takes an item (used to resume a paused source). */
  onTake: ((remaining: number) => void) | undefined;
  /** Called once when the consumer stops early. */
  onDiscard: (() => void) | undefined;

  get size(): number {
    return this.#items.length;
  }

  get closed(): boolean {
    return this.#closing !== undefined || this.#isDiscarded;
  }

  offer(value: T): void {
    if (this.closed) return;
    this.#enqueue({ value });
  }

  send(value: T): Promise<void> {
    if (this.#isDiscarded) return Promise.reject(this.#reason());
    if (this.#closing !== undefined) {
      return Promise.reject(new HostError(ErrorCode.Internal, "send on a closed stream"));
    }
    return new Promise<void>((resolve, reject) => this.#enqueue({ value, taken: { resolve, reject } }));
  }

  end(): void {
    if (this.closed) return;
    this.#closing = { kind: "end" };
    this.#settleWaiters();
  }

  fail(error: unknown): void {
    if (this.closed) return;
    this.#closing = { kind: "fail", error };
    this.#settleWaiters();
  }

  next(): Promise<IteratorResult<T>> {
    const item = this.#items.shift();
    if (item !== undefined) {
      item.taken?.resolve();
      this.onTake?.(this.#items.length);
      return Promise.resolve({ value: item.value, done: false });
    }
    if (this.#isDiscarded) return Promise.resolve({ value: undefined, done: true });
    const closing = this.#closing;
    if (closing !== undefined) return settle(closing);
    return new Promise((resolve, reject) => this.#waiters.push({ resolve, reject }));
  }

  return(): Promise<IteratorResult<T>> {
    // The reason is built only if a send is rejected with it: a consumer that stops after the end
    // (every finished stream) costs no error object and no stack capture.
    this.#discardWith(() => new HostError(ErrorCode.Cancelled, "stream consumer stopped"));
    return Promise.resolve({ value: undefined, done: true });
  }

  /** Stops consumption: pending and later sends reject with `reason`, waiting readers see done. */
  discard(reason: unknown): void {
    this.#discardWith(() => reason);
  }

  #discardWith(reason: () => unknown): void {
    if (this.#isDiscarded) return;
    this.#isDiscarded = true;
    this.#discardReason = reason;
    for (const item of this.#items.splice(0)) item.taken?.reject(this.#reason());
    for (const w of this.#waiters.splice(0)) w.resolve({ value: undefined, done: true });
    this.onDiscard?.();
  }

  /** The discard reason, built once on first use. */
  #reason(): unknown {
    if (this.#discardReason !== undefined) {
      this.#discarded = this.#discardReason();
      this.#discardReason = undefined;
    }
    return this.#discarded;
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }

  #enqueue(item: Item<T>): void {
    const waiter = this.#waiters.shift();
    if (waiter !== undefined) {
      item.taken?.resolve();
      waiter.resolve({ value: item.value, done: false });
      this.onTake?.(this.#items.length);
      return;
    }
    this.#items.push(item);
  }

  #settleWaiters(): void {
    if (this.#items.length > 0) return;
    const closing = this.#closing;
    if (closing === undefined) return;
    for (const w of this.#waiters.splice(0)) settle<T>(closing).then(w.resolve, w.reject);
  }
}

function settle<T>(closing: Closing): Promise<IteratorResult<T>> {
  switch (closing.kind) {
    case "end":
      return Promise.resolve({ value: undefined, done: true });
    case "fail":
      return Promise.reject(closing.error);
    default: {
      const exhaustive: never = closing;
      throw new Error(`unknown closing ${String(exhaustive)}`);
    }
  }
}
