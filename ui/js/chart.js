import { s } from './dom.js';
import { wallClock } from './time.js';

/**
 * A line chart as SVG: `points` [{at: ms, [key]: number|null}], x = time over the last `windowMs`
 * up to the newest point (labelled with its UTC time), y from 0 to the largest value (nulls leave gaps).
 * @param opts.key the field plotted; opts.label the title; opts.unit appended to the axis values
 */
export function lineChart(points, { key, label, unit = '', width = 460, height = 160, windowMs = 10 * 60_000 }) {
  const pad = { l: 48, r: 10, t: 20, b: 22 };
  const w = width - pad.l - pad.r;
  const hgt = height - pad.t - pad.b;
  const end = points.length ? points[points.length - 1].at : Date.now();
  const start = end - windowMs;
  const values = points.map((p) => p[key]).filter((v) => v !== null && v !== undefined);
  const max = niceMax(Math.max(0, ...values));
  const x = (at) => pad.l + ((at - start) / windowMs) * w;
  const y = (v) => pad.t + hgt - (v / max) * hgt;
  const segments = [];
  let cur = [];
  for (const p of points) {
    const v = p[key];
    if (v === null || v === undefined) {
      if (cur.length) segments.push(cur);
      cur = [];
    } else cur.push(`${x(p.at).toFixed(1)},${y(v).toFixed(1)}`);
  }
  if (cur.length) segments.push(cur);
  const last = values.length ? values[values.length - 1] : null;
  return s('svg', { class: 'chart', width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': label, 'data-chart': key },
    s('text', { x: pad.l, y: 13 }, `${label}${last === null ? '' : `: ${fmt(last)}${unit}`}`),
    [0, 0.5, 1].map((f) => [
      s('line', { x1: pad.l, x2: pad.l + w, y1: y(max * f), y2: y(max * f), stroke: '#e3e5ec' }),
      s('text', { x: pad.l - 4, y: y(max * f) + 4, 'text-anchor': 'end' }, `${fmt(max * f)}${unit}`),
    ]),
    s('text', { x: pad.l, y: height - 6 }, `−${Math.round(windowMs / 60_000)} min`),
    s('text', { x: pad.l + w, y: height - 6, 'text-anchor': 'end' }, points.length ? `${wallClock(new Date(end), 'UTC')} UTC` : 'now'),
    segments.map((seg) => seg.length === 1
      ? s('circle', { cx: seg[0].split(',')[0], cy: seg[0].split(',')[1], r: 2, fill: '#2f5fd0' })
      : s('polyline', { points: seg.join(' '), fill: 'none', stroke: '#2f5fd0', 'stroke-width': 1.5 })),
    values.length === 0 ? s('text', { x: pad.l + w / 2, y: pad.t + hgt / 2, 'text-anchor': 'middle' }, 'collecting samples…') : null);
}

function niceMax(v) {
  if (v <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 5, 10]) if (v <= m * p) return m * p;
  return 10 * p;
}

function fmt(v) {
  if (v === 0) return '0';
  if (Math.abs(v) >= 100) return String(Math.round(v));
  if (Math.abs(v) >= 1) return v.toFixed(1);
  return v.toPrecision(2);
}
