import { api, seg } from '../api.js';
import { h, input, replace, select, status, table } from '../dom.js';
import { cursorPager } from '../pager.js';
import { time } from '../time.js';
import { STATES } from './overview.js';
import { attemptsText, errorText, progressBar } from './task-figures.js';
import { showTask } from './task-detail.js';

const PAGE_SIZES = ['10', '25', '50', '100'];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Tasks: a search by task id or idempotency key, filters by status, type and queue, and pages of
 * `size` tasks (newest first; Next follows the API's `next_cursor`, Previous goes back to the
 * cursor a page was read with). Columns: tenant, attempts in the current retry budget, progress of
 * running tasks and the last error (code and message, cut short; the whole text as tooltip).
 * The search, filters, page size and the selected task live in the URL hash; a page turn keeps them.
 */
export async function render(root, ctx) {
  const p = ctx.params;
  // Any page size the API takes (1..1000) can be given in the URL; the menu offers a few.
  const asked = Number(p.get('size'));
  const size = Number.isInteger(asked) && asked >= 1 && asked <= 1000 ? String(asked) : '50';
  const sizes = PAGE_SIZES.includes(size) ? PAGE_SIZES : [size, ...PAGE_SIZES];
  const filters = h('form', { class: 'filters', id: 'task-filters' },
    input('q', 'task id or idempotency key', p.get('q') ?? '', { type: 'search', size: 30 }),
    select('status', 'status', STATES, p.get('status') ?? ''),
    input('task_type', 'task type', p.get('task_type') ?? ''),
    input('queue', 'queue', p.get('queue') ?? ''),
    h('label', {}, 'per page', h('select', { name: 'size' }, sizes.map((n) => h('option', { value: n, selected: n === size }, n)))),
    h('button', { type: 'submit' }, 'Filter'));
  filters.addEventListener('submit', (e) => {
    e.preventDefault();
    ctx.go('tasks', Object.fromEntries(new FormData(filters)));
  });
  const list = h('div', { id: 'task-list' });
  const detail = h('div', { class: 'panel', id: 'task-detail' }, h('p', { class: 'muted' }, 'Select a task.'));
  replace(root, h('h2', {}, 'Tasks'), filters, h('div', { class: 'row' }, h('div', { class: 'col wide' }, list), h('div', { class: 'col' }, detail)));
  ctx.onLeave(() => detail.stopPolling?.());

  const q = (p.get('q') ?? '').trim();
  const query = { status: p.get('status'), task_type: p.get('task_type'), queue: p.get('queue'), idempotency_key: q || undefined, limit: Number(size) };
  let byId = null;
  const show = async (id) => {
    await showTask(detail, id, ctx, () => pages.reload());
    // Below the list on a narrow window: bring the task into view.
    if (detail.getBoundingClientRect().top > window.innerHeight) detail.scrollIntoView({ block: 'start' });
  };
  const pages = cursorPager((cursor) => api('GET', '/api/v1/tasks', { query: { ...query, cursor } }), (r, bar, index) => {
    // The task whose id is the search text heads the first page (when the filters admit it).
    const rows = index === 0 && byId && !r.tasks.some((t) => t.task_id === byId.task_id) ? [byId, ...r.tasks] : r.tasks;
    replace(list,
      q ? h('p', { class: 'muted', id: 'search-note' }, searchNote(q, byId, r.tasks.length)) : null,
      table([
        { label: 'task', value: (t) => h('code', {}, t.task_id) },
        { label: 'type', value: (t) => t.task_type },
        { label: 'queue', value: (t) => t.queue },
        { label: 'tenant', value: (t) => t.metadata?.tenant_id ?? '' },
        { label: 'status', value: (t) => status(t.status) },
        { label: 'attempts', value: (t) => attemptsText(t) },
        { label: 'progress', value: (t) => (t.status === 'RUNNING' ? progressBar(t.progress) : '') },
        { label: 'last error', value: (t) => errorCell(t.error) },
        { label: 'created', value: (t) => time(t.created_at) },
      ], rows, { onRow: (t) => show(t.task_id), rowAttrs: (t) => ({ 'data-task-id': t.task_id }) }),
      bar);
  }, { bar: 'task-pager', prev: 'prev-page', number: 'page-number', next: 'next-page' });
  // The scheduler names every task with a UUID: other search text can only be a key.
  if (UUID.test(q)) byId = await taskById(q, query);
  await pages.load(0);
  // A search that finds one task opens it.
  const found = q ? list.querySelectorAll('tbody tr[data-task-id]') : [];
  if (p.get('id')) await show(p.get('id'));
  else if (found.length === 1) await show(found[0].dataset.taskId);
}

/** The task with id `id` when it exists and passes the status/type/queue filters; else null. */
async function taskById(id, query) {
  try {
    const t = await api('GET', `/api/v1/tasks/${seg(id)}`);
    const fits = (!query.status || t.status === query.status) && (!query.task_type || t.task_type === query.task_type) && (!query.queue || t.queue === query.queue);
    return fits ? t : null;
  } catch (err) {
    if (err.status === 404) return null;
    throw err;
  }
}

function searchNote(q, byId, byKey) {
  const parts = [];
  if (byId) parts.push('1 task with this id');
  parts.push(`${byKey} ${byKey === 1 ? 'task' : 'tasks'} with this idempotency key on this page`);
  return `Search "${q}": ${parts.join(', ')}.`;
}

/** The last error's code (or type) and message, cut to 60 characters; the whole text as tooltip. */
function errorCell(error) {
  const text = errorText(error);
  if (!text) return '';
  return h('span', { class: 'error-cell', title: text }, text.length > 60 ? `${text.slice(0, 59)}…` : text);
}
