import { api, seg } from '../api.js';
import { h, input, replace, table } from '../dom.js';

/**
 * Tenants and limits (admin key when keys are configured): the tenants with settings, the
 * per-task-type rate limits and the concurrency limits per key (with the attempts running on the
 * node that answered), with forms to PUT a tenant's weight and rate limit, a task type's limit
 * and a key's `max_running`, and to DELETE a tenant's stored settings (its tasks stay), a task type's or a key's limit.
 */
export async function render(root, ctx) {
  const body = h('div', {});
  replace(root, h('h2', {}, 'Tenants and limits'), body);
  const [t, rl, cl] = await Promise.all([api('GET', '/api/v1/tenants'), api('GET', '/api/v1/rate-limits'), api('GET', '/api/v1/concurrency-limits')]);
  const reload = () => render(root, ctx);
  const act = async (label, fn) => {
    try {
      await fn();
      ctx.flash(`${label}: saved`);
      await reload();
    } catch (err) {
      ctx.flash(`${label} failed: ${err.message}`, false);
    }
  };
  const num = (v) => (v === '' ? undefined : Number(v));
  const tenantForm = h('form', { class: 'filters', id: 'tenant-form' },
    input('tenant', 'tenant', '', { required: true }),
    input('weight', 'weight (empty: keep)', '', { type: 'number', min: 0.001, max: 1000000, step: 'any' }),
    input('rate', 'starts/s (empty: keep)', '', { type: 'number', min: 0.001, step: 'any' }), input('burst', 'burst', '', { type: 'number', min: 1, step: 1 }),
    input('no_limit', 'remove its limit', '', { type: 'checkbox' }),
    h('button', { type: 'submit' }, 'Save tenant'));
  tenantForm.addEventListener('submit', (e) => {
    e.preventDefault();
    const f = Object.fromEntries(new FormData(tenantForm));
    // A field left empty is left out of the PUT, which keeps the value in force (docs/TENANTS.md).
    const bodyOut = {};
    if (f.weight !== '') bodyOut.weight = num(f.weight);
    if (f.no_limit !== undefined) bodyOut.rate_limit = null;
    else if (f.rate !== '') bodyOut.rate_limit = { rate_per_second: num(f.rate), ...(f.burst === '' ? {} : { burst: num(f.burst) }) };
    if (Object.keys(bodyOut).length === 0) {
      ctx.flash(`Tenant ${f.tenant}: nothing to change (give a weight, a rate, or tick "remove its limit")`, false);
      return;
    }
    void act(`Tenant ${f.tenant}`, () => api('PUT', `/api/v1/tenants/${seg(f.tenant)}`, { body: bodyOut }));
  });
  const limitForm = h('form', { class: 'filters', id: 'rate-limit-form' },
    input('task_type', 'task type', '', { required: true }), input('rate', 'starts/s', '', { type: 'number', min: 0.001, step: 'any', required: true }),
    input('burst', 'burst', '', { type: 'number', min: 1, step: 1 }), h('button', { type: 'submit' }, 'Save limit'));
  limitForm.addEventListener('submit', (e) => {
    e.preventDefault();
    const f = Object.fromEntries(new FormData(limitForm));
    void act(`Rate limit ${f.task_type}`, () => api('PUT', `/api/v1/rate-limits/${seg(f.task_type)}`, {
      body: { rate_per_second: num(f.rate), ...(f.burst === '' ? {} : { burst: num(f.burst) }) },
    }));
  });
  const keyForm = h('form', { class: 'filters', id: 'concurrency-limit-form' },
    input('key', 'concurrency key', '', { required: true }), input('max_running', 'max running', '', { type: 'number', min: 1, step: 1, required: true }),
    h('button', { type: 'submit' }, 'Save limit'));
  keyForm.addEventListener('submit', (e) => {
    e.preventDefault();
    const f = Object.fromEntries(new FormData(keyForm));
    void act(`Concurrency limit ${f.key}`, () => api('PUT', `/api/v1/concurrency-limits/${seg(f.key)}`, { body: { max_running: num(f.max_running) } }));
  });
  replace(body,
    h('h3', {}, 'Tenants'),
    table([
      { label: 'tenant', value: (x) => x.tenant_id },
      { label: 'weight', value: (x) => String(x.weight) },
      { label: 'rate limit', value: (x) => (x.rate_limit ? `${x.rate_limit.rate_per_second}/s, burst ${x.rate_limit.burst ?? 1}` : 'none') },
      { label: '', value: (x) => h('button', { onclick: () => act(`Delete tenant ${x.tenant_id}`, () => api('DELETE', `/api/v1/tenants/${seg(x.tenant_id)}`)) }, 'Delete settings') },
    ], t.tenants),
    tenantForm,
    h('h3', {}, 'Rate limits by task type'),
    table([
      { label: 'task type', value: (x) => x.task_type },
      { label: 'starts/s', value: (x) => String(x.rate_per_second) },
      { label: 'burst', value: (x) => String(x.burst) },
      { label: '', value: (x) => h('button', { onclick: () => act(`Remove limit ${x.task_type}`, () => api('DELETE', `/api/v1/rate-limits/${seg(x.task_type)}`)) }, 'Remove') },
    ], rl.rate_limits),
    limitForm,
    h('h3', {}, 'Concurrency limits by key'),
    table([
      { label: 'key', value: (x) => x.key },
      { label: 'max running', value: (x) => String(x.max_running) },
      { label: 'running here', value: (x) => String(x.running) },
      { label: '', value: (x) => h('button', { onclick: () => act(`Remove limit ${x.key}`, () => api('DELETE', `/api/v1/concurrency-limits/${seg(x.key)}`)) }, 'Remove') },
    ], cl.concurrency_limits),
    keyForm);
}
