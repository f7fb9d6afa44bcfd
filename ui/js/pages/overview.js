import { api, metricsText } from '../api.js';
import { lineChart } from '../chart.js';
import { h, replace, table } from '../dom.js';
import { MetricsSampler, byLabel, total } from '../metrics.js';

export const STATES = ['SCHEDULED', 'PENDING', 'RUNNING', 'RETRYING', 'BLOCKED', 'OVERFLOW', 'SUCCEEDED', 'FAILED', 'DEAD', 'CANCELLED'];
const WINDOW_MS = 10 * 60_000;
/** Each plotted rate is taken over this window (several scrapes), not over one 3 s interval. */
const SMOOTH_MS = 15_000;

/**
 * Overview: depth by state, throughput and dispatch lag plotted from `/metrics` sampled every 3 s
 * while the page is shown (each rate over the last 15 s), worker restarts and kills, process figures. Without access to
 * `/metrics` (keys configured and no admin key) the depths are counted from task lists (up to 100
 * each) and the plots are left out.
 */
export async function render(root, ctx) {
  const depth = h('div', { class: 'cards', id: 'depth' });
  const charts = h('div', { class: 'row', id: 'charts' });
  const workers = h('div', { id: 'workers' });
  const note = h('p', { class: 'muted', id: 'metrics-note' });
  replace(root, h('h2', {}, 'Overview'), depth, note, h('h3', {}, 'Last 10 minutes'), charts, h('h3', {}, 'Worker processes'), workers);
  let fallbackShown = false;
  const sampler = new MetricsSampler(metricsText, ({ samples, points, error }) => {
    if (error) {
      replace(note, `Metrics unavailable (${error.message}); depths below are counted from task lists.`);
      if (!fallbackShown) {
        fallbackShown = true;
        void depthFromLists(depth);
      }
      if (error.status === 401 || error.status === 403) sampler.stop();
      return;
    }
    replace(note, `Sampled from /metrics every 3 s while this page is open (${points.length} points); each rate is taken over the last ${SMOOTH_MS / 1000} s. Times in UTC.`);
    replace(depth, STATES.map((st) => card(st, total(samples, 'scheduler_tasks', { state: st }), () => ctx.go('tasks', { status: st }))));
    replace(charts,
      h('div', {}, lineChart(points, { key: 'throughput', label: `Throughput (tasks ended/s, over ${SMOOTH_MS / 1000} s)`, unit: '/s', windowMs: WINDOW_MS })),
      h('div', {}, lineChart(points, { key: 'lagMs', label: `Dispatch lag (mean over ${SMOOTH_MS / 1000} s)`, unit: ' ms', windowMs: WINDOW_MS })),
      h('div', {}, lineChart(points, { key: 'submitted', label: `Submitted (tasks/s, over ${SMOOTH_MS / 1000} s)`, unit: '/s', windowMs: WINDOW_MS })));
    const restarts = byLabel(samples, 'scheduler_worker_restarts_total', 'worker_id');
    const kills = byLabel(samples, 'scheduler_worker_kills_total', 'worker_id');
    const ids = [...new Set([...Object.keys(restarts), ...Object.keys(kills)])].sort();
    replace(workers,
      h('div', { class: 'cards' },
        card('restarts', Object.values(restarts).reduce((a, b) => a + b, 0)),
        card('timeout kills', Object.values(kills).reduce((a, b) => a + b, 0)),
        card('RSS MiB', Math.round(total(samples, 'scheduler_process_resident_memory_bytes') / 2 ** 20)),
        card('event-loop lag ms', Math.round(total(samples, 'scheduler_nodejs_eventloop_lag_seconds') * 1000))),
      ids.length
        ? table([{ label: 'worker', value: (id) => id }, { label: 'restarts', value: (id) => restarts[id] ?? 0 }, { label: 'kills', value: (id) => kills[id] ?? 0 }], ids)
        : h('p', { class: 'muted' }, 'No worker process has crashed or been killed since start.'));
  }, { intervalMs: 3000, windowMs: WINDOW_MS, smoothMs: SMOOTH_MS });
  sampler.start();
  ctx.onLeave(() => sampler.stop());
}

function card(label, n, onclick) {
  return h('div', { class: 'card', 'data-state': label, onclick, role: onclick ? 'link' : undefined },
    h('div', { class: 'n' }, String(n)), h('div', { class: 'l' }, label));
}

async function depthFromLists(el) {
  const counts = await Promise.all(STATES.map(async (st) => {
    try {
      const r = await api('GET', '/api/v1/tasks', { query: { status: st, limit: 100 } });
      return `${r.tasks.length}${r.next_cursor ? '+' : ''}`;
    } catch {
      return '?';
    }
  }));
  replace(el, STATES.map((st, i) => card(st, counts[i])));
}
