import { api, seg } from '../api.js';
import { dagSvg } from '../dag.js';
import { h, replace, select, status, table } from '../dom.js';
import { cursorPager } from '../pager.js';
import { time } from '../time.js';
import { showTask } from './task-detail.js';

const WF_STATES = ['RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED'];

/**
 * Workflows: list (filter by status) and the selected workflow's tasks drawn as a layered DAG
 * coloured by state; clicking a node shows that task. A RUNNING workflow can be cancelled
 * (confirmed first; POST /api/v1/workflows/{id}/cancel), the outcome flashed and the graph redrawn.
 */
export async function render(root, ctx) {
  const p = ctx.params;
  const filters = h('form', { class: 'filters' }, select('status', 'status', WF_STATES, p.get('status') ?? ''), h('button', { type: 'submit' }, 'Filter'));
  filters.addEventListener('submit', (e) => {
    e.preventDefault();
    ctx.go('workflows', Object.fromEntries(new FormData(filters)));
  });
  const list = h('div', { id: 'workflow-list' });
  const detail = h('div', { id: 'workflow-detail' });
  const taskPanel = h('div', { class: 'panel', id: 'task-detail' }, h('p', { class: 'muted' }, 'Click a node for its task.'));
  replace(root, h('h2', {}, 'Workflows'), filters, list, detail, taskPanel);
  const cancel = async (w) => {
    const name = w.workflow_name ?? w.workflow_id;
    if (!confirm(`Cancel workflow ${name}? Its waiting tasks are cancelled and its running ones aborted.`)) return;
    try {
      const r = await api('POST', `/api/v1/workflows/${seg(w.workflow_id)}/cancel`);
      const running = r.running_task_ids ?? [];
      ctx.flash(`Cancel workflow ${name}: ${r.status}${running.length ? ` (aborting ${running.length} running task(s))` : ''}`);
    } catch (err) {
      ctx.flash(`Cancel workflow ${name} failed: ${err.message}`, false);
    }
    await Promise.all([show(w.workflow_id), loadList()]);
  };
  const show = async (id) => {
    const w = await api('GET', `/api/v1/workflows/${seg(id)}`);
    replace(detail,
      h('h3', {}, `${w.workflow_name ?? w.workflow_id} `, status(w.status), ' ',
        h('button', { id: 'cancel-workflow', disabled: w.status !== 'RUNNING' || w.cancel_requested === true, onclick: () => cancel(w) }, 'Cancel workflow')),
      h('p', { class: 'muted' }, `${w.task_count} tasks, ${w.open_tasks} open; `,
        Object.entries(w.task_counts ?? {}).map(([k, v]) => `${k} ${v}`).join(', ')),
      w.task_details.length > 500 ? h('p', { class: 'muted' }, `Large workflow: drawing ${w.task_details.length} tasks.`) : null,
      h('div', { class: 'dag-wrap' }, dagSvg(w.task_details, { onNode: (t) => showTask(taskPanel, t.task_id, ctx) })));
  };
  const pages = cursorPager((cursor) => api('GET', '/api/v1/workflows', { query: { status: p.get('status'), limit: 50, cursor } }), (r, bar) => {
    replace(list, table([
      { label: 'workflow', value: (w) => w.workflow_name ?? w.workflow_id },
      { label: 'status', value: (w) => status(w.status) },
      { label: 'tasks', value: (w) => `${w.task_count ?? ''}` },
      { label: 'created', value: (w) => time(w.created_at) },
    ], r.workflows, { onRow: (w) => ctx.go('workflows', { status: p.get('status'), id: w.workflow_id }), rowAttrs: (w) => ({ 'data-workflow-id': w.workflow_id }) }), bar);
  }, { bar: 'workflow-pager', prev: 'workflow-prev-page', number: 'workflow-page-number', next: 'workflow-next-page' });
  const loadList = () => pages.reload();
  await pages.load(0);
  if (p.get('id')) await show(p.get('id'));
}
