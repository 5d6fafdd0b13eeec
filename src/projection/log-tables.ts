// Compact columns the session-log projection (session-log.ts) keeps for every execution and every mark
// (END, SUSPEND, FORK), so a projection of a long session costs a few dozen bytes per turn rather
// than an object graph per turn. Invariant: each table answers exactly what was added to it, in order:
// an execution by its id or index (start seq, last seq, inputs seen and announced, completed), a mark
// by its seq (the record's content hash and the index of the turn pending there, -1 for none), the
// last mark added at a seq winning, as a Map would.
import { ExecIds, type ExecIdsState } from "./exec-ids.js";

/**
 * Estimated bytes one execution costs in an ExecTable (its columns at worst-case doubling slack, its id
 * key). With MARK_OVERHEAD_BYTES (its END) this is 288 bytes per completed turn; the heap it was checked
 * against is in docs/performance.md ("The record cache keeps a lean projection").
 */
export const EXECUTION_OVERHEAD_BYTES = 192;
/** Estimated bytes one mark costs in a MarkTable (seq, pending index and a 32-byte hash, at doubling slack). */
export const MARK_OVERHEAD_BYTES = 96;

function grown<T extends Float64Array | Int32Array | Uint8Array>(a: T, need: number, make: (n: number) => T): T {
  if (need <= a.length) return a;
  const next = make(Math.max(need, a.length * 2));
  next.set(a);
  return next;
}

/** A typed array's first `n` elements as bytes (a view, in the host's byte order: see codec.ts). */
function columnOf(a: Float64Array | Int32Array | Uint8Array, n: number): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, n * a.BYTES_PER_ELEMENT);
}

/** The inverse of columnOf (a copy); RangeError unless it holds exactly `n` elements. */
function columnFrom<T extends Float64Array | Int32Array | Uint8Array>(
  bytes: Uint8Array,
  n: number,
  make: (n: number) => T,
): T {
  const out = make(Math.max(n, 8));
  if (bytes.length !== n * out.BYTES_PER_ELEMENT) throw new RangeError(`column holds ${bytes.length} bytes, not ${n}`);
  new Uint8Array(out.buffer).set(bytes);
  return out;
}

/** What an ExecTable holds, as plain data (codec.ts). */
export interface ExecTableState {
  readonly ids: ExecIdsState;
  readonly starts: Uint8Array;
  readonly lasts: Uint8Array;
  readonly seen: Uint8Array;
  readonly counts: Uint8Array;
  readonly done: Uint8Array;
}

/** What a MarkTable holds, as plain data (codec.ts). */
export interface MarkTableState {
  readonly n: number;
  readonly seqs: Uint8Array;
  readonly pending: Uint8Array;
  readonly hashes: Uint8Array;
  readonly odd: readonly (readonly [number, string])[];
  readonly late: readonly (readonly [number, string, number])[];
}

export class ExecTable {
  private n = 0;
  private starts = new Float64Array(8);
  private lasts = new Float64Array(8);
  private seen = new Float64Array(8);
  private counts = new Float64Array(8);
  private done = new Uint8Array(8);
  private ids = new ExecIds();

  get length(): number {
    return this.n;
  }

  /** Adds an execution that started at `startSeq` announcing `inputCount` inputs; returns its index. */
  add(id: string, startSeq: number, inputCount: number): number {
    const i = this.n++;
    const make = (k: number) => new Float64Array(k);
    this.starts = grown(this.starts, this.n, make);
    this.lasts = grown(this.lasts, this.n, make);
    this.seen = grown(this.seen, this.n, make);
    this.counts = grown(this.counts, this.n, make);
    this.done = grown(this.done, this.n, (k) => new Uint8Array(k));
    this.starts[i] = startSeq;
    this.lasts[i] = startSeq;
    this.counts[i] = inputCount;
    this.ids.add(id);
    return i;
  }

  indexOf(id: string): number | undefined {
    return this.ids.indexOf(id);
  }

  startSeq(i: number): number {
    return this.starts[i]!;
  }

  lastSeq(i: number): number {
    return this.lasts[i]!;
  }

  inputsSeen(i: number): number {
    return this.seen[i]!;
  }

  inputCount(i: number): number {
    return this.counts[i]!;
  }

  completed(i: number): boolean {
    return this.done[i] === 1;
  }

  touch(i: number, seq: number): void {
    this.lasts[i] = seq;
  }

  addInput(i: number): void {
    this.seen[i] = this.seen[i]! + 1;
  }

  complete(i: number): void {
    this.done[i] = 1;
  }

  exportState(): ExecTableState {
    return {
      ids: this.ids.exportState(),
      starts: columnOf(this.starts, this.n),
      lasts: columnOf(this.lasts, this.n),
      seen: columnOf(this.seen, this.n),
      counts: columnOf(this.counts, this.n),
      done: columnOf(this.done, this.n),
    };
  }

  /** The table `exportState` described; RangeError when its columns disagree. */
  static fromState(s: ExecTableState): ExecTable {
    const t = new ExecTable();
    t.ids = ExecIds.fromState(s.ids);
    const n = t.ids.length;
    const f64 = (k: number) => new Float64Array(k);
    t.starts = columnFrom(s.starts, n, f64);
    t.lasts = columnFrom(s.lasts, n, f64);
    t.seen = columnFrom(s.seen, n, f64);
    t.counts = columnFrom(s.counts, n, f64);
    t.done = columnFrom(s.done, n, (k) => new Uint8Array(k));
    t.n = n;
    return t;
  }
}

export interface MarkAt {
  readonly hash: string;
  /** Index (in the ExecTable) of the turn pending at the mark; -1 between turns. */
  readonly pendingAt: number;
}

const HEX64 = /^[0-9a-f]{64}$/;

export class MarkTable {
  private n = 0;
  private seqs = new Float64Array(8);
  private pending = new Int32Array(8);
  /** 32 bytes per mark: its hash when it is 64 lowercase hex digits. */
  private hashes = new Uint8Array(8 * 32);
  /** Hashes of another form, by mark index. */
  private readonly odd = new Map<number, string>();
  /** Marks added at a seq not above the last one's (never in a journal's log), by seq. */
  private readonly late = new Map<number, MarkAt>();

  get length(): number {
    return this.n + this.late.size;
  }

  add(seq: number, hash: string, pendingAt: number): void {
    if (this.n > 0 && seq <= this.seqs[this.n - 1]!) {
      this.late.set(seq, { hash, pendingAt });
      return;
    }
    const i = this.n++;
    this.seqs = grown(this.seqs, this.n, (k) => new Float64Array(k));
    this.pending = grown(this.pending, this.n, (k) => new Int32Array(k));
    this.hashes = grown(this.hashes, this.n * 32, (k) => new Uint8Array(k));
    this.seqs[i] = seq;
    this.pending[i] = pendingAt;
    if (HEX64.test(hash)) this.hashes.set(Buffer.from(hash, "hex"), i * 32);
    else this.odd.set(i, hash);
  }

  get(seq: number): MarkAt | undefined {
    const late = this.late.get(seq);
    if (late) return late;
    let lo = 0;
    let hi = this.n - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const s = this.seqs[mid]!;
      if (s === seq) return { hash: this.hashAt(mid), pendingAt: this.pending[mid]! };
      if (s < seq) lo = mid + 1;
      else hi = mid - 1;
    }
    return undefined;
  }

  exportState(): MarkTableState {
    return {
      n: this.n,
      seqs: columnOf(this.seqs, this.n),
      pending: columnOf(this.pending, this.n),
      hashes: columnOf(this.hashes, this.n * 32),
      odd: [...this.odd],
      late: [...this.late].map(([seq, m]) => [seq, m.hash, m.pendingAt] as const),
    };
  }

  /** The table `exportState` described; RangeError when its columns disagree. */
  static fromState(s: MarkTableState): MarkTable {
    const t = new MarkTable();
    t.seqs = columnFrom(s.seqs, s.n, (k) => new Float64Array(k));
    t.pending = columnFrom(s.pending, s.n, (k) => new Int32Array(k));
    t.hashes = columnFrom(s.hashes, s.n * 32, (k) => new Uint8Array(k));
    for (const [i, hash] of s.odd) t.odd.set(i, hash);
    for (const [seq, hash, pendingAt] of s.late) t.late.set(seq, { hash, pendingAt });
    t.n = s.n;
    return t;
  }

  private hashAt(i: number): string {
    return this.odd.get(i) ?? Buffer.from(this.hashes.buffer, this.hashes.byteOffset + i * 32, 32).toString("hex");
  }
}
