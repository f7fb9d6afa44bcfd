import { api, seg } from '../api.js';
import { h, json, replace, status, table } from '../dom.js';
import { time, utcInputToIso } from '../time.js';
import { attemptLogs } from './attempt-logs.js';
import { attemptsLine, budgetOf, errorText, progressView, replayCycles } from './task-figures.js';

const WAITING = ['SCHEDULED', 'PENDING', 'RETRYING', 'BLOCKED', 'OVERFLOW'];
/** How often a RUNNING task's page reads it again (progress, status, logs), in ms. */
const POLL_MS = 2000;

/**
 * Shows one task (with attempts) in `el`: its fields, attempts counted per replay cycle, progress,
 * payload, result, error, the attempt history and an attempt's logs, with the actions the API
 * allows in its state: Cancel (waiting or running), Reschedule (waiting; the time is read as UTC),
 * and for a DEAD task Replay and Delete (`/api/v1/dead-letter/{id}`), each confirmed first; the
 * outcome is flashed and the task read again. While the task is RUNNING the panel reads it every
 * 2 s (progress, logs) until it ends or the panel is replaced. `changed()` after any action.
 */
export async function showTask(el, id, ctx, changed = () => {}) {
  el.stopPolling?.();
  let t;
  try {
    t = await api('GET', `/api/v1/tasks/${seg(id)}`, { query: { include: 'attempts' } });
  } catch (err) {
    replace(el, h('p', { class: 'error' }, err.message));
    return;
  }
  const again = () => showTask(el, id, ctx, changed);
  const act = async (label, confirmText, fn, after = again) => {
    if (confirmText && !confirm(confirmText)) return;
    try {
      const r = await fn();
      ctx.flash(`${label}: ${r?.status ?? (r?.deleted ? 'deleted' : 'done')}`);
      await after(r);
    } catch (err) {
      ctx.flash(`${label} failed: ${err.message}`, false);
      await again();
    }
    await changed();
  };
  const b = budgetOf(t);
  const { byAttempt, cycles } = replayCycles(t);
  const when = h('input', { type: 'datetime-local', id: 'reschedule-at', step: 1 });
  const waiting = WAITING.includes(t.status);
  const dead = t.status === 'DEAD';
  const logs = attemptLogs(t.task_id, t.attempts);
  const progressDd = h('dd', { id: 'progress-value' }, progressView(t));
  replace(el,
    h('h3', {}, 'Task ', h('code', {}, t.task_id)),
    h('dl', { class: 'kv' },
      kv('status', status(t.status)), kv('type', t.task_type), kv('queue', t.queue), kv('priority', t.priority),
      kv('tenant', t.metadata?.tenant_id ?? ''), kv('idempotency key', t.idempotency_key ?? ''),
      kv('workflow', t.workflow_id ? h('a', { href: `#workflows?id=${encodeURIComponent(t.workflow_id)}` }, t.workflow_id) : ''),
      kv('scheduled at', time(t.scheduled_at)), kv('created', time(t.created_at)), kv('started', time(t.started_at)),
      kv('completed', time(t.completed_at)), kv('attempts', h('span', { id: 'task-attempts' }, attemptsLine(t))),
      kv('duration', t.duration_ms === null || t.duration_ms === undefined ? '' : `${t.duration_ms} ms`),
      [h('dt', {}, 'progress'), progressDd],
      kv('checkpoint', t.checkpoint
        ? [`attempt ${t.checkpoint.attempt}, ${t.checkpoint.size_bytes} bytes, saved `, time(t.checkpoint.saved_at)]
        : 'none')),
    h('div', { class: 'filters', id: 'task-actions' },
      h('button', {
        id: 'cancel-task', disabled: !waiting && t.status !== 'RUNNING',
        onclick: () => act('Cancel', null, () => api('POST', `/api/v1/tasks/${seg(id)}/cancel`)),
      }, 'Cancel'),
      h('label', {}, 'new time (UTC)', when),
      h('button', {
        id: 'reschedule-task', disabled: !waiting,
        onclick: () => act('Reschedule', null, () => {
          const at = utcInputToIso(when.value);
          if (!at) throw new Error('choose a time');
          return api('PATCH', `/api/v1/tasks/${seg(id)}`, { body: { scheduled_at: at } });
        }),
      }, 'Reschedule'),
      dead ? [
        h('button', {
          id: 'replay-task',
          onclick: () => act(`Replay ${id}`, `Replay ${id}? It runs again at once with a fresh budget of ${b.budget} attempt(s).`,
            () => api('POST', `/api/v1/dead-letter/${seg(id)}/replay`)),
        }, 'Replay'),
        h('button', {
          id: 'delete-task', class: 'danger',
          onclick: () => act(`Delete ${id}`, `Delete ${id} with its attempt history and logs? This cannot be undone.`,
            () => api('DELETE', `/api/v1/dead-letter/${seg(id)}`),
            () => replace(el, h('p', { id: 'task-deleted' }, 'Task ', h('code', {}, id), ' was deleted with its history and logs.'))),
        }, 'Delete'),
      ] : null),
    h('h3', {}, 'Payload'), json(t.payload),
    h('h3', {}, 'Result'), json(t.result ?? null),
    t.error ? [h('h3', {}, 'Error'), json(t.error)] : null,
    t.checkpoint ? [h('h3', {}, 'Checkpoint'), json(t.checkpoint.value)] : null,
    h('h3', {}, 'Attempts'),
    table([
      { label: '#', value: (a) => a.attempt },
      { label: 'cycle', value: (a) => String(byAttempt.get(a.attempt) ?? cycles) },
      { label: 'outcome', value: (a) => status(a.outcome ?? 'RUNNING') },
      { label: 'worker', value: (a) => a.worker_id ?? '' },
      { label: 'started', value: (a) => time(a.started_at) },
      { label: 'ended', value: (a) => time(a.ended_at) },
      { label: 'error', value: (a) => errorText(a.error) },
    ], withRunning(t), { rowAttrs: (a) => ({ 'data-attempt': a.attempt }) }),
    logs?.nodes);
  if (t.status === 'RUNNING') poll(el, t, progressDd, logs, again);
}

/**
 * Reads a RUNNING task every {@link POLL_MS}: its progress and the shown attempt's logs are
 * refreshed in place; a change of state or attempt shows the task afresh. Stops when the panel
 * leaves the document or `el.stopPolling()` is called.
 */
function poll(el, t, progressDd, logs, again) {
  let timer = null;
  el.stopPolling = () => {
    clearTimeout(timer);
    el.stopPolling = undefined;
  };
  const tick = async () => {
    if (!el.isConnected) return el.stopPolling?.();
    try {
      const cur = await api('GET', `/api/v1/tasks/${seg(t.task_id)}`);
      if (!el.stopPolling) return;
      if (cur.status !== t.status || cur.attempts !== t.attempts) return void (await again());
      replace(progressDd, progressView(cur));
      await logs?.reload();
    } catch {
      // A failed read is tried again at the next tick.
    }
    if (el.stopPolling) timer = setTimeout(tick, POLL_MS);
  };
  timer = setTimeout(tick, POLL_MS);
}

/** The ended attempts, then the running one (the task's own `started_at` and `worker_id`) if any. */
function withRunning(t) {
  const history = t.attempt_history ?? [];
  if (t.status !== 'RUNNING' || history.some((a) => a.attempt === t.attempts)) return history;
  return [...history, { attempt: t.attempts, outcome: 'RUNNING', worker_id: t.worker_id, started_at: t.started_at, ended_at: null, error: null }];
}

function kv(k, v) {
  return [h('dt', {}, k), h('dd', {}, v ?? '')];
}
