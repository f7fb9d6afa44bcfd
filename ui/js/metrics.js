/**
 * Reading `/metrics` (Prometheus text exposition format 0.0.4) and turning successive scrapes into
 * rates: throughput (tasks ended per second) and dispatch lag (mean, from the histogram's `_sum` and
 * `_count` deltas) per sampling interval.
 */

/**
 * Parses the text format into samples `{name, labels, value}` (comments and blank lines skipped;
 * label values unescaped).
 */
export function parseMetrics(text) {
  const out = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels = {};
    const re = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;
    for (let l; (l = re.exec(m[3] ?? '')); ) labels[l[1]] = l[2].replace(/\\n/g, '\n').replace(/\\(.)/g, '$1');
    out.push({ name: m[1], labels, value: Number(m[4]) });
  }
  return out;
}

/** The sum of every sample named `name` whose labels include `match`. */
export function total(samples, name, match = {}) {
  let sum = 0;
  for (const x of samples) {
    if (x.name !== name) continue;
    if (Object.entries(match).every(([k, v]) => x.labels[k] === v)) sum += x.value;
  }
  return sum;
}

/** `{labelValue: value}` of the samples named `name`, keyed by label `label`. */
export function byLabel(samples, name, label) {
  const out = {};
  for (const x of samples) if (x.name === name) out[x.labels[label]] = (out[x.labels[label]] ?? 0) + x.value;
  return out;
}

/**
 * One point of the rate series from two scrapes `prev`, `cur` (`{at: ms, samples}`):
 * `throughput` tasks ended per second, `lagMs` mean dispatch lag of the attempts started in the
 * interval (null when none started), `submitted` per second. A counter that went down (the service
 * restarted) counts from zero.
 */
export function ratePoint(prev, cur) {
  const dt = (cur.at - prev.at) / 1000;
  const delta = (name) => {
    const a = total(prev.samples, name);
    const b = total(cur.samples, name);
    return b >= a ? b - a : b;
  };
  const lagCount = delta('scheduler_dispatch_lag_seconds_count');
  const lagSum = delta('scheduler_dispatch_lag_seconds_sum');
  return {
    at: cur.at,
    throughput: dt > 0 ? delta('scheduler_tasks_completed_total') / dt : 0,
    submitted: dt > 0 ? delta('scheduler_tasks_submitted_total') / dt : 0,
    lagMs: lagCount > 0 ? (lagSum / lagCount) * 1000 : null,
  };
}

/**
 * Scrapes `/metrics` every `intervalMs` while started, keeping the points of the last `windowMs`,
 * and calls `onSample({samples, points, error})` after each scrape.
 * @param fetchText async () => metrics text (throws on failure)
 */
export class MetricsSampler {
  constructor(fetchText, onSample, { intervalMs = 3000, windowMs = 10 * 60_000 } = {}) {
    this.fetchText = fetchText;
    this.onSample = onSample;
    this.intervalMs = intervalMs;
    this.windowMs = windowMs;
    this.points = [];
    this.last = null;
    this.timer = null;
  }

  start() {
    if (this.timer) return;
    const tick = async () => {
      await this.sample();
      if (this.timer !== null) this.timer = setTimeout(tick, this.intervalMs);
    };
    this.timer = 0;
    void tick();
  }

  stop() {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  async sample() {
    try {
      const cur = { at: Date.now(), samples: parseMetrics(await this.fetchText()) };
      if (this.last) this.points.push(ratePoint(this.last, cur));
      this.last = cur;
      const from = cur.at - this.windowMs;
      while (this.points.length && this.points[0].at < from) this.points.shift();
      this.onSample({ samples: cur.samples, points: this.points, error: null });
    } catch (error) {
      this.onSample({ samples: null, points: this.points, error });
    }
  }
}
