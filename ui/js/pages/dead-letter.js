import { api, seg } from '../api.js';
import { h, input, replace, status, table } from '../dom.js';
import { time } from '../time.js';
import { showTask } from './task-detail.js';
import { errorText } from './task-figures.js';

/**
 * Dead-letter queue: DEAD tasks filtered by type and queue; replay (fresh retry budget) or delete
 * each; bulk replay of the selected entries or of every entry matching the filters (all pages).
 */
export async function render(root, ctx) {
  const p = ctx.params;
  const filters = h('form', { class: 'filters', id: 'dlq-filters' },
    input('task_type', 'task type', p.get('task_type') ?? ''),
    input('queue', 'queue', p.get('queue') ?? ''),
    h('button', { type: 'submit' }, 'Filter'));
  filters.addEventListener('submit', (e) => {
    e.preventDefault();
    ctx.go('dead-letter', Object.fromEntries(new FormData(filters)));
  });
  const list = h('div', { id: 'dlq-list' });
  const detail = h('div', { class: 'panel', id: 'task-detail' }, h('p', { class: 'muted' }, 'Select an entry for its detail.'));
  const query = { task_type: p.get('task_type'), queue: p.get('queue') };
  const selected = new Set();

  const load = async () => {
    selected.clear();
    const r = await api('GET', '/api/v1/dead-letter', { query: { ...query, limit: 100 } });
    replace(list,
      h('div', { class: 'filters' },
        h('button', { id: 'replay-selected', onclick: () => bulk([...selected]) }, 'Replay selected'),
        h('button', { id: 'replay-all', onclick: () => replayAll() }, 'Replay all matching')),
      table([
        { label: '', value: (t) => h('input', { type: 'checkbox', 'aria-label': `select ${t.task_id}`, onclick: (e) => { e.stopPropagation(); e.target.checked ? selected.add(t.task_id) : selected.delete(t.task_id); } }) },
        { label: 'task', value: (t) => h('code', {}, t.task_id) },
        { label: 'type', value: (t) => t.task_type },
        { label: 'queue', value: (t) => t.queue },
        { label: 'tenant', value: (t) => t.metadata?.tenant_id ?? '' },
        { label: 'error', value: (t) => errorText(t.error) },
        { label: 'dead since', value: (t) => time(t.completed_at) },
        { label: '', value: (t) => [
          h('button', { class: 'replay', onclick: (e) => { e.stopPropagation(); void one('Replay', () => api('POST', `/api/v1/dead-letter/${seg(t.task_id)}/replay`)); } }, 'Replay'),
          ' ',
          h('button', { class: 'delete', onclick: (e) => { e.stopPropagation(); if (confirm(`Delete ${t.task_id} and its history?`)) void one('Delete', () => api('DELETE', `/api/v1/dead-letter/${seg(t.task_id)}`)); } }, 'Delete'),
        ] },
      ], r.tasks, { onRow: (t) => showTask(detail, t.task_id, ctx), rowAttrs: (t) => ({ 'data-task-id': t.task_id }) }),
      r.next_cursor ? h('p', { class: 'muted' }, 'Showing the newest 100; "Replay all matching" covers every page.') : null);
  };
  const one = async (label, fn) => {
    try {
      const r = await fn();
      ctx.flash(`${label} ${r.task_id}: ${r.status ?? (r.deleted ? 'deleted' : 'done')}`);
    } catch (err) {
      ctx.flash(`${label} failed: ${err.message}`, false);
    }
    await load();
  };
  const bulk = async (ids) => {
    let ok = 0;
    const failed = [];
    for (const id of ids) {
      try {
        await api('POST', `/api/v1/dead-letter/${seg(id)}/replay`);
        ok++;
      } catch (err) {
        failed.push(`${id}: ${err.message}`);
      }
    }
    ctx.flash(`Replayed ${ok} of ${ids.length}${failed.length ? `; failed: ${failed.slice(0, 3).join('; ')}` : ''}`, failed.length === 0);
    await load();
  };
  const replayAll = async () => {
    // Collect every matching id first, then replay: replaying while paging would shift the pages.
    const ids = [];
    let cursor;
    do {
      const r = await api('GET', '/api/v1/dead-letter', { query: { ...query, limit: 100, cursor } });
      ids.push(...r.tasks.map((t) => t.task_id));
      cursor = r.next_cursor;
    } while (cursor);
    if (ids.length === 0) return ctx.flash('Nothing to replay');
    if (!confirm(`Replay ${ids.length} dead-letter task(s)?`)) return;
    await bulk(ids);
  };
  replace(root, h('h2', {}, 'Dead-letter queue'), filters, h('div', { class: 'row' }, h('div', { class: 'col wide' }, list), h('div', { class: 'col' }, detail)));
  await load();
}

