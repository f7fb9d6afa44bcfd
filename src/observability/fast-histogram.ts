import type { MetricValueWithName, Registry } from 'prom-client';

/** One label set's buckets (per bucket, not cumulative), sum and count. */
interface Series {
  labels: Record<string, string>;
  /** counts[i]: observations in (bounds[i-1], bounds[i]]; the last: above every bound (+Inf only). */
  counts: Float64Array;
  sum: number;
  count: number;
}

/** What prom-client's registry reads of a metric (`get()`), as its own histogram answers it. */
export interface HistogramData {
  name: string;
  help: string;
  type: 'histogram';
  values: Array<MetricValueWithName<string>>;
  aggregator: 'sum';
}

/** What a {@link FastHistogram} is made with (as prom-client's `Histogram` takes it). */
export interface FastHistogramConfig<L extends string> {
  name: string;
  help: string;
  /** Upper bounds, ascending (`+Inf` is implied). */
  buckets: readonly number[];
  /** Its one label, or none. */
  labelNames?: readonly L[];
  registers: Registry[];
}

/**
 * A Prometheus histogram for the dispatcher's per-attempt observations (dispatch lag, duration):
 * the same exposition as prom-client's `Histogram` (its `get()` answers the same shape, so a
 * prom-client `Registry` renders it in the text format with the other metrics), without
 * prom-client's per-call work (a closure, the labels converted, checked and hashed each time).
 * Measured: prom-client's observations were about a tenth of the main thread at the instant of a
 * herd of 100,000 (load-tests/README.md). At most one label, whose value keys the series.
 * Observing a value that is not a finite number throws a TypeError, as prom-client does.
 */
export class FastHistogram<L extends string = never> {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram' as const;
  readonly aggregator = 'sum' as const;
  private readonly bounds: readonly number[];
  private readonly label: L | undefined;
  private readonly series = new Map<string, Series>();

  constructor(config: FastHistogramConfig<L>) {
    this.name = config.name;
    this.help = config.help;
    this.bounds = [...config.buckets];
    this.label = config.labelNames?.[0];
    // As prom-client: an unlabelled histogram shows its zero series before any observation.
    if (this.label === undefined) this.seriesOf('', false);
    for (const r of config.registers) r.registerMetric(this as never);
  }

  /** Observes `value` (unlabelled), or `value` for the label set `labels`. */
  observe(labelsOrValue: Partial<Record<L, string>> | number, value?: number): void {
    const labelled = typeof labelsOrValue !== 'number';
    const v = labelled ? (value as number) : labelsOrValue;
    if (!Number.isFinite(v)) throw new TypeError(`Value is not a valid number: ${String(v)}`);
    const key = labelled && this.label !== undefined ? (labelsOrValue[this.label] ?? '') : '';
    const s = this.series.get(key) ?? this.seriesOf(key, labelled);
    const b = this.bounds;
    let i = 0;
    while (i < b.length && v > b[i]) i++;
    s.counts[i]++;
    s.sum += v;
    s.count++;
  }

  /** A new series for label value `key` (`labelled`: under this histogram's label). */
  private seriesOf(key: string, labelled: boolean): Series {
    const labels: Record<string, string> = labelled && this.label !== undefined ? { [this.label]: key } : {};
    const s: Series = { labels, counts: new Float64Array(this.bounds.length + 1), sum: 0, count: 0 };
    this.series.set(key, s);
    return s;
  }

  /** Forgets every observation and every series (as prom-client's `reset`). */
  reset(): void {
    this.series.clear();
  }

  /** The metric as prom-client's registry reads it: cumulative buckets per label set, then sum and count. */
  async get(): Promise<HistogramData> {
    const values: Array<MetricValueWithName<string>> = [];
    for (const s of this.series.values()) {
      let acc = 0;
      for (let i = 0; i < this.bounds.length; i++) {
        acc += s.counts[i];
        values.push({ value: acc, labels: { le: this.bounds[i], ...s.labels }, metricName: `${this.name}_bucket` });
      }
      values.push({ value: s.count, labels: { le: '+Inf', ...s.labels }, metricName: `${this.name}_bucket` });
      values.push({ value: s.sum, labels: s.labels, metricName: `${this.name}_sum` });
      values.push({ value: s.count, labels: s.labels, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }
}
