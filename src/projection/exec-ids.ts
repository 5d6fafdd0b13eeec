// The execution ids of a session-log projection (log-tables.ts ExecTable), kept flat: every id's UTF-8
// bytes in one growing buffer, each id's end offset in a column, and an open-addressing index of
// 32-bit hashes over them. Invariants: `indexOf(id)` is the index `add` gave that id (undefined for an
// id never added) and ids are unique; the stored form (`exportState`) is two byte columns, so rebuilding
// a table of a million-event session (codec.ts, docs/protocol.md §5.9) copies them and hashes
// their bytes once — no string, no Map entry and no JSON per execution.

/** FNV-1a over bytes, as 32-bit unsigned. */
function fnv(bytes: Uint8Array, from: number, to: number): number {
  let h = 0x811c9dc5;
  for (let i = from; i < to; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
  return h >>> 0;
}

/** FNV-1a over a string's UTF-8 bytes (no copy when it is ASCII, as every minted id is). */
function fnvOf(s: string): { hash: number; bytes: Uint8Array | undefined } {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) {
      const bytes = Buffer.from(s, "utf8");
      return { hash: fnv(bytes, 0, bytes.length), bytes };
    }
    h = Math.imul(h ^ c, 0x01000193);
  }
  return { hash: h >>> 0, bytes: undefined };
}

/** What an ExecIds holds, as plain data: the ids' UTF-8 bytes back to back and each one's end (Uint32 column). */
export interface ExecIdsState {
  readonly bytes: Uint8Array;
  readonly ends: Uint8Array;
}

export class ExecIds {
  private n = 0;
  private bytes = new Uint8Array(256);
  private used = 0;
  private ends = new Uint32Array(8);
  /** Open-addressing slots (capacity a power of two, at most half full): index + 1, 0 for empty. */
  private slots = new Int32Array(16);
  /** The last id looked up or added and its index: a turn's records name the same id in a row. */
  private lastId: string | undefined;
  private lastIndex = -1;

  get length(): number {
    return this.n;
  }

  /** Adds `id` as the next index; RangeError when it is there already. */
  add(id: string): number {
    if (this.indexOf(id) !== undefined) throw new RangeError(`execution id ${id} repeats`);
    const { hash, bytes } = fnvOf(id);
    const raw = bytes ?? Buffer.from(id, "latin1");
    if (this.used + raw.length > this.bytes.length) {
      const next = new Uint8Array(Math.max(this.used + raw.length, this.bytes.length * 2));
      next.set(this.bytes.subarray(0, this.used));
      this.bytes = next;
    }
    this.bytes.set(raw, this.used);
    this.used += raw.length;
    const i = this.n++;
    if (this.n > this.ends.length) {
      const next = new Uint32Array(this.ends.length * 2);
      next.set(this.ends);
      this.ends = next;
    }
    this.ends[i] = this.used;
    if (this.n * 2 > this.slots.length) this.rehash(this.slots.length * 2);
    else this.place(hash, i);
    this.lastId = id;
    this.lastIndex = i;
    return i;
  }

  indexOf(id: string): number | undefined {
    if (id === this.lastId) return this.lastIndex;
    const { hash, bytes } = fnvOf(id);
    const mask = this.slots.length - 1;
    for (let s = hash & mask; ; s = (s + 1) & mask) {
      const at = this.slots[s]!;
      if (at === 0) return undefined;
      if (this.equals(at - 1, id, bytes)) {
        this.lastId = id;
        this.lastIndex = at - 1;
        return at - 1;
      }
    }
  }

  exportState(): ExecIdsState {
    return {
      bytes: this.bytes.subarray(0, this.used),
      ends: new Uint8Array(this.ends.buffer, this.ends.byteOffset, this.n * 4),
    };
  }

  /** The ids `exportState` described (copied); RangeError when the columns disagree or an id repeats. */
  static fromState(s: ExecIdsState): ExecIds {
    if (s.ends.byteLength % 4 !== 0) throw new RangeError("execution id ends are not a Uint32 column");
    const t = new ExecIds();
    const n = s.ends.byteLength / 4;
    t.ends = new Uint32Array(Math.max(n, 8));
    new Uint8Array(t.ends.buffer).set(s.ends);
    t.bytes = new Uint8Array(Math.max(s.bytes.length, 256));
    t.bytes.set(s.bytes);
    t.used = s.bytes.length;
    let from = 0;
    for (let i = 0; i < n; i++) {
      const end = t.ends[i]!;
      if (end < from || end > t.used) throw new RangeError(`execution id ${i} ends outside the id bytes`);
      from = end;
    }
    if (from !== t.used) throw new RangeError("id bytes after the last execution id");
    t.n = n;
    let capacity = 16;
    while (capacity < n * 2) capacity *= 2;
    t.rehash(capacity, true);
    return t;
  }

  private startOf(i: number): number {
    return i === 0 ? 0 : this.ends[i - 1]!;
  }

  private equals(i: number, id: string, bytes: Uint8Array | undefined): boolean {
    const from = this.startOf(i);
    const to = this.ends[i]!;
    if (bytes) return Buffer.compare(bytes, this.bytes.subarray(from, to)) === 0;
    if (to - from !== id.length) return false;
    for (let k = 0; k < id.length; k++) if (this.bytes[from + k] !== id.charCodeAt(k)) return false;
    return true;
  }

  private sameBytes(a: number, b: number): boolean {
    const af = this.startOf(a);
    const bf = this.startOf(b);
    const len = this.ends[a]! - af;
    if (this.ends[b]! - bf !== len) return false;
    for (let k = 0; k < len; k++) if (this.bytes[af + k] !== this.bytes[bf + k]) return false;
    return true;
  }

  private place(hash: number, i: number): void {
    const mask = this.slots.length - 1;
    let s = hash & mask;
    while (this.slots[s] !== 0) s = (s + 1) & mask;
    this.slots[s] = i + 1;
  }

  /** Rebuilds the index at `capacity` slots from the id bytes; `check`: refuse repeated ids. */
  private rehash(capacity: number, check = false): void {
    this.slots = new Int32Array(capacity);
    const mask = capacity - 1;
    for (let i = 0; i < this.n; i++) {
      let s = fnv(this.bytes, this.startOf(i), this.ends[i]!) & mask;
      for (;;) {
        const at = this.slots[s]!;
        if (at === 0) break;
        if (check && this.sameBytes(at - 1, i)) throw new RangeError(`execution id ${i} repeats id ${at - 1}`);
        s = (s + 1) & mask;
      }
      this.slots[s] = i + 1;
    }
  }
}
