// Counters and histograms whose hot path is a field add: a child is bound once per label combination
// and recording on it touches plain numbers only (prom-client's own children re-hash their label object
// on every inc/observe). Invariant: a family renders exactly what prom-client's Counter/Histogram of
// the same name, labels and buckets would (cumulative `_bucket` lines with `le`, then `_sum` and
// `_count`), so the exposition text and every scrape test are unchanged; values are read at scrape time
// only. Families register on a prom-client Registry through its public registerMetric.
import type { Registry } from "prom-client";

/** A counter child: add to it. */
export interface CounterChild {
  inc(n?: number): void;
}

/** A histogram child: observe one value. */
export interface HistogramChild {
  observe(v: number): void;
}

interface MetricValue {
  readonly labels: Record<string, string | number>;
  readonly value: number;
  readonly metricName?: string;
}

interface MetricSnapshot {
  readonly name: string;
  readonly help: string;
  readonly type: "counter" | "histogram";
  readonly values: MetricValue[];
  readonly aggregator: "sum";
}

class CounterCell implements CounterChild {
  value = 0;
  constructor(readonly labels: Record<string, string>) {}
  inc(n = 1): void {
    this.value += n;
  }
}

class HistogramCell implements HistogramChild {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  constructor(
    readonly labels: Record<string, string>,
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length);
  }
  observe(v: number): void {
    this.sum += v;
    this.count += 1;
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (v <= bounds[i]!) {
        this.counts[i]! += 1;
        return;
      }
    }
  }
}

/** The cells of one family, keyed by their label values in labelNames order. */
abstract class Family<C> {
  private readonly cells = new Map<string, C>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    families: Registry,
  ) {
    families.registerMetric(this as never);
  }
  protected abstract make(labels: Record<string, string>): C;

  /** The child for these label values (one per labelName, in order); bind it once where you can. */
  child(...values: string[]): C {
    const key = values.length === 1 ? values[0]! : values.join("\u0001");
    let cell = this.cells.get(key);
    if (cell === undefined) {
      const labels: Record<string, string> = {};
      this.labelNames.forEach((n, i) => {
        labels[n] = values[i] ?? "";
      });
      cell = this.make(labels);
      this.cells.set(key, cell);
    }
    return cell;
  }

  protected all(): IterableIterator<C> {
    return this.cells.values();
  }

  reset(): void {
    this.cells.clear();
  }
}

export class FastCounter extends Family<CounterCell> {
  readonly type = "counter";
  readonly aggregator = "sum";
  protected make(labels: Record<string, string>): CounterCell {
    return new CounterCell(labels);
  }
  async get(): Promise<MetricSnapshot> {
    const values = [...this.all()].map((c) => ({ labels: c.labels, value: c.value }));
    return { name: this.name, help: this.help, type: "counter", values, aggregator: "sum" };
  }
}

export class FastHistogram extends Family<HistogramCell> {
  readonly type = "histogram";
  readonly aggregator = "sum";
  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    families: Registry,
    readonly buckets: readonly number[],
  ) {
    super(name, help, labelNames, families);
  }
  protected make(labels: Record<string, string>): HistogramCell {
    return new HistogramCell(labels, this.buckets);
  }
  async get(): Promise<MetricSnapshot> {
    const values: MetricValue[] = [];
    for (const c of this.all()) {
      let acc = 0;
      this.buckets.forEach((le, i) => {
        acc += c.counts[i]!;
        values.push({ metricName: `${this.name}_bucket`, labels: { le, ...c.labels }, value: acc });
      });
      values.push({ metricName: `${this.name}_bucket`, labels: { le: "+Inf", ...c.labels }, value: c.count });
      values.push({ metricName: `${this.name}_sum`, labels: c.labels, value: c.sum });
      values.push({ metricName: `${this.name}_count`, labels: c.labels, value: c.count });
    }
    return { name: this.name, help: this.help, type: "histogram", values, aggregator: "sum" };
  }
}
