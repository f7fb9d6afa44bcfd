import { s } from './dom.js';

/**
 * Layers of a DAG: a node's layer is the length of the longest dependency path leading to it
 * (roots at 0), computed with Kahn's algorithm; nodes on a cycle or with unknown dependencies
 * (which the API refuses, so never in practice) go after the rest.
 * @param tasks [{workflow_task_id, dependencies: [workflow_task_id]}] (a workflow's `task_details`)
 * @returns Map workflow_task_id → layer
 */
export function layers(tasks) {
  const ids = new Set(tasks.map((t) => t.workflow_task_id));
  const indeg = new Map();
  const down = new Map();
  for (const t of tasks) {
    const deps = [...new Set(t.dependencies ?? [])].filter((d) => ids.has(d));
    indeg.set(t.workflow_task_id, deps.length);
    for (const d of deps) (down.get(d) ?? down.set(d, []).get(d)).push(t.workflow_task_id);
  }
  const layer = new Map();
  const queue = tasks.filter((t) => indeg.get(t.workflow_task_id) === 0).map((t) => t.workflow_task_id);
  for (const id of queue) layer.set(id, 0);
  for (let i = 0; i < queue.length; i++) {
    const id = queue[i];
    for (const next of down.get(id) ?? []) {
      layer.set(next, Math.max(layer.get(next) ?? 0, layer.get(id) + 1));
      indeg.set(next, indeg.get(next) - 1);
      if (indeg.get(next) === 0) queue.push(next);
    }
  }
  const maxLayer = Math.max(0, ...layer.values());
  for (const t of tasks) if (!layer.has(t.workflow_task_id)) layer.set(t.workflow_task_id, maxLayer + 1);
  return layer;
}

const FILL = {
  SUCCEEDED: '#d4efdf', FAILED: '#f5d5d1', DEAD: '#f5d5d1', CANCELLED: '#e5e7e9', RUNNING: '#d6e4ff',
  PENDING: '#fff6d6', SCHEDULED: '#fff6d6', RETRYING: '#fde3cf', BLOCKED: '#eadcf2',
};

/**
 * The workflow's tasks as a layered SVG drawing: one column per layer, an arrow per dependency,
 * each box coloured by state and labelled with the task's id and state. `onNode(task)` on click.
 */
export function dagSvg(tasks, { onNode } = {}) {
  const layer = layers(tasks);
  const cols = [];
  for (const t of tasks) (cols[layer.get(t.workflow_task_id)] ??= []).push(t);
  const bw = 150, bh = 38, gx = 60, gy = 16, pad = 12;
  const pos = new Map();
  cols.forEach((col, ci) => col.forEach((t, ri) => pos.set(t.workflow_task_id, { x: pad + ci * (bw + gx), y: pad + ri * (bh + gy) })));
  const width = pad * 2 + cols.length * (bw + gx) - gx;
  const height = pad * 2 + Math.max(1, ...cols.map((c) => c?.length ?? 0)) * (bh + gy) - gy;
  const edges = [];
  for (const t of tasks) {
    for (const d of new Set(t.dependencies ?? [])) {
      const a = pos.get(d), b = pos.get(t.workflow_task_id);
      if (!a || !b) continue;
      const x1 = a.x + bw, y1 = a.y + bh / 2, x2 = b.x, y2 = b.y + bh / 2, mx = (x1 + x2) / 2;
      edges.push(s('path', { d: `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2 - 4},${y2}`, fill: 'none', stroke: '#8a8f9c', 'marker-end': 'url(#arrow)' }));
    }
  }
  const clip = (text, n) => (text.length > n ? `${text.slice(0, n - 1)}…` : text);
  return s('svg', { class: 'dag', width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': 'workflow graph' },
    s('defs', {}, s('marker', { id: 'arrow', viewBox: '0 0 8 8', refX: 4, refY: 4, markerWidth: 8, markerHeight: 8, orient: 'auto' },
      s('path', { d: 'M0,0 L8,4 L0,8 z', fill: '#8a8f9c' }))),
    edges,
    tasks.map((t) => {
      const p = pos.get(t.workflow_task_id);
      return s('g', { class: 'dag-node', 'data-id': t.workflow_task_id, 'data-status': t.status, transform: `translate(${p.x},${p.y})`, onclick: onNode ? () => onNode(t) : undefined, cursor: onNode ? 'pointer' : undefined },
        s('title', {}, `${t.workflow_task_id} (${t.task_type ?? ''}): ${t.status}`),
        s('rect', { width: bw, height: bh, rx: 5, fill: FILL[t.status] ?? '#fff', stroke: '#6b7080' }),
        s('text', { x: 8, y: 15 }, clip(t.workflow_task_id, 22)),
        s('text', { x: 8, y: 30, class: `s-${t.status}` }, t.status));
    }));
}
