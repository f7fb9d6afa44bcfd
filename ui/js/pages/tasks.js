import { api, seg } from '../api.js';
import { h, input, json, replace, select, status, table, time } from '../dom.js';
import { STATES } from './overview.js';
import { attemptLogs } from './attempt-logs.js';

/**
 * Tasks: list filtered by status, type and queue (newest first, "More" follows `next_cursor`);
 * a task's detail (payload, result, error, progress, checkpoint, attempts, an attempt's logs) with Cancel and
 * Reschedule (PATCH `scheduled_at`). The filters and the selected task live in the URL hash.
 */
export async function render(root, ctx) {
  const p = ctx.params;
  const filters = h('form', { class: 'filters', id: 'task-filters' },
    select('status', 'status', STATES, p.get('status') ?? ''),
    input('task_type', 'task type', p.get('task_type') ?? ''),
    input('queue', 'queue', p.get('queue') ?? ''),
    h('button', { type: 'submit' }, 'Filter'));
  filters.addEventListener('submit', (e) => {
    e.preventDefault();
    ctx.go('tasks', Object.fromEntries(new FormData(filters)));
  });
  const list = h('div', { id: 'task-list' });
  const detail = h('div', { class: 'panel', id: 'task-detail' }, h('p', { class: 'muted' }, 'Select a task.'));
  replace(root, h('h2', {}, 'Tasks'), filters, h('div', { class: 'row' }, h('div', { class: 'col' }, list), h('div', { class: 'col' }, detail)));
  const query = { status: p.get('status'), task_type: p.get('task_type'), queue: p.get('queue'), limit: 50 };
  const rows = [];
  const show = (id) => showTask(detail, id, ctx, () => refresh());
  const refresh = async () => {
    rows.length = 0;
    await more(undefined);
  };
  const more = async (cursor) => {
    const r = await api('GET', '/api/v1/tasks', { query: { ...query, cursor } });
    rows.push(...r.tasks);
    replace(list, table([
      { label: 'task', value: (t) => h('code', {}, t.task_id) },
      { label: 'type', value: (t) => t.task_type },
      { label: 'queue', value: (t) => t.queue },
      { label: 'status', value: (t) => status(t.status) },
      { label: 'created', value: (t) => time(t.created_at) },
    ], rows, { onRow: (t) => show(t.task_id), rowAttrs: (t) => ({ 'data-task-id': t.task_id }) }),
    r.next_cursor ? h('button', { id: 'more', onclick: () => more(r.next_cursor) }, 'More') : null);
  };
  await refresh();
  if (p.get('id')) await show(p.get('id'));
}

/** Shows one task (with attempts) in `el`; `changed()` after a cancel or reschedule. */
export async function showTask(el, id, ctx, changed = () => {}) {
  let t;
  try {
    t = await api('GET', `/api/v1/tasks/${seg(id)}`, { query: { include: 'attempts' } });
  } catch (err) {
    replace(el, h('p', { class: 'error' }, err.message));
    return;
  }
  const act = async (label, fn) => {
    try {
      const r = await fn();
      ctx.flash(`${label}: ${r?.status ?? 'done'}`);
    } catch (err) {
      ctx.flash(`${label} failed: ${err.message}`, false);
    }
    await showTask(el, id, ctx, changed);
    await changed();
  };
  const when = h('input', { type: 'datetime-local', id: 'reschedule-at', step: 1 });
  const waiting = ['SCHEDULED', 'PENDING', 'RETRYING', 'BLOCKED', 'OVERFLOW'].includes(t.status);
  replace(el,
    h('h3', {}, 'Task ', h('code', {}, t.task_id)),
    h('dl', { class: 'kv' },
      kv('status', status(t.status)), kv('type', t.task_type), kv('queue', t.queue), kv('priority', t.priority),
      kv('tenant', t.metadata?.tenant_id ?? ''), kv('workflow', t.workflow_id ?? ''),
      kv('scheduled at', time(t.scheduled_at)), kv('created', time(t.created_at)), kv('started', time(t.started_at)),
      kv('completed', time(t.completed_at)), kv('attempts', `${t.attempts ?? 0} of ${(t.max_retries ?? 0) + 1}`),
      kv('duration', t.duration_ms === null || t.duration_ms === undefined ? '' : `${t.duration_ms} ms`),
      kv('progress', progressView(t)),
      kv('checkpoint', t.checkpoint
        ? [`attempt ${t.checkpoint.attempt}, ${t.checkpoint.size_bytes} bytes, saved `, time(t.checkpoint.saved_at)]
        : 'none')),
    h('div', { class: 'filters' },
      h('button', { id: 'cancel-task', disabled: !waiting && t.status !== 'RUNNING', onclick: () => act('Cancel', () => api('POST', `/api/v1/tasks/${seg(id)}/cancel`)) }, 'Cancel'),
      h('label', {}, 'new time (local)', when),
      h('button', {
        id: 'reschedule-task', disabled: !waiting,
        onclick: () => act('Reschedule', () => {
          if (!when.value) throw new Error('choose a time');
          return api('PATCH', `/api/v1/tasks/${seg(id)}`, { body: { scheduled_at: new Date(when.value).toISOString() } });
        }),
      }, 'Reschedule')),
    h('h3', {}, 'Payload'), json(t.payload),
    h('h3', {}, 'Result'), json(t.result ?? null),
    t.error ? [h('h3', {}, 'Error'), json(t.error)] : null,
    t.checkpoint ? [h('h3', {}, 'Checkpoint'), json(t.checkpoint.value)] : null,
    h('h3', {}, 'Attempts'),
    table([
      { label: '#', value: (a) => a.attempt },
      { label: 'outcome', value: (a) => status(a.outcome ?? 'RUNNING') },
      { label: 'worker', value: (a) => a.worker_id ?? '' },
      { label: 'started', value: (a) => time(a.started_at) },
      { label: 'ended', value: (a) => time(a.ended_at) },
      { label: 'error', value: (a) => (a.error ? a.error.message ?? JSON.stringify(a.error) : '') },
    ], t.attempt_history ?? []),
    attemptLogs(t.task_id, t.attempts));
}

/**
 * The task's last progress report (`progress`: a fraction 0..1 or `{done, total, message}`) as a
 * bar with its text, the attempt that reported it and when; empty before any report.
 */
function progressView(t) {
  const p = t.progress;
  if (p === null || p === undefined) return '';
  const fraction = typeof p === 'number' ? p : typeof p.done === 'number' && typeof p.total === 'number' ? (p.total === 0 ? 1 : p.done / p.total) : null;
  const text = typeof p === 'number'
    ? `${Math.round(p * 100)} %`
    : [typeof p.done === 'number' ? `${p.done}${typeof p.total === 'number' ? ` of ${p.total}` : ''}` : '', p.message ?? ''].filter(Boolean).join(' · ');
  return h('span', { id: 'task-progress' },
    fraction === null ? null : h('progress', { max: 1, value: fraction }),
    ` ${text} (attempt ${t.progress_attempt}, `, time(t.progress_at), ')');
}

function kv(k, v) {
  return [h('dt', {}, k), h('dd', {}, v ?? '')];
}
