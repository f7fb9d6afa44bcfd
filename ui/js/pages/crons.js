import { api, seg } from '../api.js';
import { h, json, replace, status, table } from '../dom.js';
import { cursorPager } from '../pager.js';
import { zonedTime } from '../time.js';

/**
 * Cron tasks: list with the next fire time, pause/resume (PATCH `enabled`), and for the selected
 * cron its next 5 fire times and its fire records (`/runs`). A cron's times are shown in the
 * cron's own zone beside UTC (not in the browser's zone).
 */
export async function render(root, ctx) {
  const list = h('div', { id: 'cron-list' });
  const detail = h('div', { class: 'panel', id: 'cron-detail' }, h('p', { class: 'muted' }, 'Select a cron task.'));
  replace(root, h('h2', {}, 'Cron tasks'), h('div', { class: 'row' }, h('div', { class: 'col' }, list), h('div', { class: 'col' }, detail)));
  const toggle = async (c) => {
    try {
      const r = await api('PATCH', `/api/v1/cron-tasks/${seg(c.cron_id)}`, { body: { enabled: !c.enabled } });
      ctx.flash(`${r.name ?? r.cron_id}: ${r.enabled ? 'resumed' : 'paused'}`);
    } catch (err) {
      ctx.flash(`Change failed: ${err.message}`, false);
    }
    await load();
    await show(c.cron_id);
  };
  const show = async (id) => {
    try {
      const [c, runs] = await Promise.all([
        api('GET', `/api/v1/cron-tasks/${seg(id)}`, { query: { preview: 5 } }),
        api('GET', `/api/v1/cron-tasks/${seg(id)}/runs`, { query: { limit: 50 } }),
      ]);
      replace(detail,
        h('h3', {}, c.name ?? c.cron_id),
        h('p', {}, h('code', {}, c.cron_expression), ` in ${c.timezone}; ${c.enabled ? 'enabled' : 'paused'}`),
        h('button', { id: 'cron-toggle', onclick: () => toggle(c) }, c.enabled ? 'Pause' : 'Resume'),
        h('h3', {}, 'Next fire times'),
        (c.next_fire_times ?? []).length ? h('ul', {}, c.next_fire_times.map((t) => h('li', {}, zonedTime(t, c.timezone)))) : h('p', { class: 'muted' }, 'none (paused)'),
        h('h3', {}, 'Fire records'),
        table([
          { label: 'fire time', value: (r) => zonedTime(r.fire_time, c.timezone) },
          { label: 'outcome', value: (r) => r.outcome },
          { label: 'reason', value: (r) => r.reason ?? '' },
          { label: 'task', value: (r) => (r.task_id ? h('a', { href: `#tasks?id=${encodeURIComponent(r.task_id)}` }, r.task_id) : '') },
          { label: 'status', value: (r) => status(r.status) },
        ], runs.runs),
        h('h3', {}, 'Task template'), json({ task_type: c.task_type, payload: c.payload, queue: c.queue, priority: c.priority }));
    } catch (err) {
      replace(detail, h('p', { class: 'error' }, err.message));
    }
  };
  const pages = cursorPager((cursor) => api('GET', '/api/v1/cron-tasks', { query: { limit: 100, cursor } }), (r, bar) => {
    replace(list, table([
      { label: 'name', value: (c) => c.name ?? c.cron_id },
      { label: 'expression', value: (c) => h('code', {}, c.cron_expression) },
      { label: 'zone', value: (c) => c.timezone },
      { label: 'type', value: (c) => c.task_type },
      { label: 'next fire', value: (c) => (c.enabled ? zonedTime(c.next_fire_time, c.timezone) : 'paused') },
      { label: '', value: (c) => h('button', { class: 'cron-toggle', onclick: (e) => { e.stopPropagation(); void toggle(c); } }, c.enabled ? 'Pause' : 'Resume') },
    ], r.cron_tasks, { onRow: (c) => show(c.cron_id), rowAttrs: (c) => ({ 'data-cron-id': c.cron_id }) }), bar);
  }, { bar: 'cron-pager', prev: 'cron-prev-page', number: 'cron-page-number', next: 'cron-next-page' });
  const load = () => pages.reload();
  await pages.load(0);
}
