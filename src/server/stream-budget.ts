// The host-wide budget for Exec updates waiting on clients that are not reading. Invariant: the bytes
// held for all streams together never stay above streamBufferTotalBytes — when an offer takes the total
// past it, the stream holding the most is cut off (its queue dropped, its client told RESOURCE_EXHAUSTED
// naming the limit) until the total is back within it. streamBufferBytes bounds one stream; this bounds
// the sum, so many stalled clients cannot add up to more than one documented amount.
import type { HostError } from "../errors/index.js";
import { overLimit } from "../limits/index.js";

/** One Exec stream's share of the budget. */
export interface StreamShare {
  /** Bytes this stream holds now. */
  readonly held: number;
  /** Adds `bytes` this stream now holds; may cut off this or another stream to stay within the total. */
  hold(bytes: number): void;
  /** The client took `bytes` of this stream's updates. */
  release(bytes: number): void;
  /** The stream ended or was cut: everything it held is released and it is never chosen again. */
  close(): void;
}

export class StreamBudget {
  readonly #limit: number;
  #held = 0;
  readonly #shares = new Set<Share>();

  constructor(limit: number) {
    this.#limit = limit;
  }

  /** Bytes held over all open streams. */
  get held(): number {
    return this.#held;
  }

  /** A share for one stream; `cut` drops that stream's queue and ends it with the error. */
  open(cut: (err: HostError) => void): StreamShare {
    const share = new Share(this, cut);
    this.#shares.add(share);
    return share;
  }

  /** @internal */
  change(bytes: number): void {
    this.#held += bytes;
  }

  /** @internal */
  remove(share: Share): void {
    this.#shares.delete(share);
  }

  /** @internal Cuts the largest streams until the total is within the limit. */
  enforce(): void {
    while (this.#held > this.#limit) {
      let largest: Share | undefined;
      for (const s of this.#shares) if (largest === undefined || s.held > largest.held) largest = s;
      if (largest === undefined || largest.held === 0) return;
      largest.cutOff(
        overLimit(
          "streamBufferTotalBytes",
          this.#limit,
          this.#held,
          "Exec updates waiting for clients that are not reading, over all streams,",
        ),
      );
    }
  }
}

class Share implements StreamShare {
  #held = 0;
  #open = true;
  readonly budget: StreamBudget;
  readonly cut: (err: HostError) => void;
  constructor(budget: StreamBudget, cut: (err: HostError) => void) {
    this.budget = budget;
    this.cut = cut;
  }

  get held(): number {
    return this.#held;
  }

  hold(bytes: number): void {
    if (!this.#open) return;
    this.#held += bytes;
    this.budget.change(bytes);
    this.budget.enforce();
  }

  release(bytes: number): void {
    if (!this.#open) return;
    const n = Math.min(bytes, this.#held);
    this.#held -= n;
    this.budget.change(-n);
  }

  close(): void {
    if (!this.#open) return;
    this.#open = false;
    this.budget.change(-this.#held);
    this.#held = 0;
    this.budget.remove(this);
  }

  cutOff(err: HostError): void {
    this.close();
    this.cut(err);
  }
}
