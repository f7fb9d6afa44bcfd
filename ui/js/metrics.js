/**
 * Reading `/metrics` (Prometheus text exposition format 0.0.4) and turning successive scrapes into
 * rates: throughput (tasks ended per second) and dispatch lag (mean, from the histogram's `_sum` and
 * `_count` deltas), each over a smoothing window of several scrapes (15 s by default).
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

/** The counters the plots are made of, summed over their labels, from one scrape's samples. */
export function countersOf(samples) {
  return {
    completed: total(samples, 'scheduler_tasks_completed_total'),
    submitted: total(samples, 'scheduler_tasks_submitted_total'),
    lagSum: total(samples, 'scheduler_dispatch_lag_seconds_sum'),
    lagCount: total(samples, 'scheduler_dispatch_lag_seconds_count'),
  };
}

/**
 * Running totals of the counters across scrapes: `prev` `{raw, acc}` (null for the first scrape)
 * and the new raw counters → the new `{raw, acc}`. A counter that went down (the service restarted)
 * counts from zero, so `acc` only grows.
 */
export function accumulate(prev, raw) {
  if (!prev) return { raw, acc: { ...raw } };
  const acc = {};
  for (const k of Object.keys(raw)) acc[k] = prev.acc[k] + (raw[k] >= prev.raw[k] ? raw[k] - prev.raw[k] : raw[k]);
  return { raw, acc };
}

/**
 * One point of the plotted series at the newest scrape of `scrapes` (`[{at: ms, acc}]`, oldest
 * first), with every rate taken over a window of `spanMs` ending there instead of over the last
 * scrape interval alone: from the newest scrape at least `spanMs` old (the oldest one while fewer
 * are kept) to the newest. Work that ends in bursts (a batch committed every few seconds) then
 * reads as its average rate, not as alternating zeros and peaks.
 * `throughput`: tasks ended per second; `submitted`: per second; `lagMs`: mean dispatch lag of
 * the attempts started in the window (null when none started). Null when fewer than two scrapes.
 */
export function windowPoint(scrapes, spanMs) {
  if (scrapes.length < 2) return null;
  const cur = scrapes[scrapes.length - 1];
  let base = scrapes[0];
  for (let i = scrapes.length - 2; i >= 0; i--) {
    if (cur.at - scrapes[i].at >= spanMs) {
      base = scrapes[i];
      break;
    }
  }
  const dt = (cur.at - base.at) / 1000;
  const d = (k) => cur.acc[k] - base.acc[k];
  return {
    at: cur.at,
    spanMs: cur.at - base.at,
    throughput: dt > 0 ? d('completed') / dt : 0,
    submitted: dt > 0 ? d('submitted') / dt : 0,
    lagMs: d('lagCount') > 0 ? (d('lagSum') / d('lagCount')) * 1000 : null,
  };
}

/**
 * Scrapes `/metrics` every `intervalMs` while started, keeping the points of the last `windowMs`
 * (each a rate over the last `smoothMs`, see {@link windowPoint}), and calls
 * `onSample({samples, points, error})` after each scrape.
 * @param fetchText async () => metrics text (throws on failure)
 */
export class MetricsSampler {
  constructor(fetchText, onSample, { intervalMs = 3000, windowMs = 10 * 60_000, smoothMs = 15_000 } = {}) {
    this.fetchText = fetchText;
    this.onSample = onSample;
    this.intervalMs = intervalMs;
    this.windowMs = windowMs;
    this.smoothMs = smoothMs;
    this.points = [];
    this.scrapes = [];
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
      const at = Date.now();
      const samples = parseMetrics(await this.fetchText());
      this.last = accumulate(this.last, countersOf(samples));
      this.scrapes.push({ at, acc: this.last.acc });
      // Keep the scrapes the next window needs: the newest one at least smoothMs old, and after it.
      while (this.scrapes.length > 2 && at - this.scrapes[1].at >= this.smoothMs) this.scrapes.shift();
      const point = windowPoint(this.scrapes, this.smoothMs);
      if (point) this.points.push(point);
      const from = at - this.windowMs;
      while (this.points.length && this.points[0].at < from) this.points.shift();
      this.onSample({ samples, points: this.points, error: null });
    } catch (error) {
      this.onSample({ samples: null, points: this.points, error });
    }
  }
}
