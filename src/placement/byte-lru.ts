// A least-recently-used map bounded by bytes, for the host's per-session caches. Invariant: the sum of
// the stored entries' byte counts never exceeds the budget after any call returns; an entry larger
// than the whole budget is never kept; reads and writes make an entry the most recently used.
export class ByteLru<V> {
  readonly #entries = new Map<string, { value: V; bytes: number }>();
  #total = 0;

  /** @param budget bytes the entries may hold together (0 keeps nothing). */
  constructor(readonly budget: number) {}

  get totalBytes(): number {
    return this.#total;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The entry, now the most recently used. */
  get(key: string): V | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.value;
  }

  /** Stores (or replaces) the entry as the most recently used, then evicts down to the budget. */
  set(key: string, value: V, bytes: number): void {
    this.delete(key);
    if (bytes > this.budget) return;
    this.#entries.set(key, { value, bytes });
    this.#total += bytes;
    this.#evict();
  }

  /** The entry's value grew in place by `delta` bytes; it may now be evicted, itself included. */
  grow(key: string, delta: number): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    entry.bytes += delta;
    this.#total += delta;
    if (entry.bytes > this.budget) this.delete(key);
    else this.#evict();
  }

  delete(key: string): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    this.#entries.delete(key);
    this.#total -= entry.bytes;
  }

  #evict(): void {
    for (const [key, entry] of this.#entries) {
      if (this.#total <= this.budget) return;
      this.#entries.delete(key);
      this.#total -= entry.bytes;
    }
  }
}
