import { api, seg } from '../api.js';
import { h, input, replace, table } from '../dom.js';

/**
 * Tenants and rate limits (admin key when keys are configured): the tenants with settings and the
 * per-task-type limits, with forms to PUT a tenant's weight and rate limit and a task type's
 * limit, and to DELETE a task type's limit.
 */
export async function render(root, ctx) {
  const body = h('div', {});
  replace(root, h('h2', {}, 'Tenants and rate limits'), body);
  const [t, rl] = await Promise.all([api('GET', '/api/v1/tenants'), api('GET', '/api/v1/rate-limits')]);
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
    input('tenant', 'tenant', '', { required: true }), input('weight', 'weight', '', { type: 'number', min: 1, step: 1 }),
    input('rate', 'starts/s (empty: none)', '', { type: 'number', min: 0.001, step: 'any' }), input('burst', 'burst', '', { type: 'number', min: 1, step: 1 }),
    h('button', { type: 'submit' }, 'Save tenant'));
  tenantForm.addEventListener('submit', (e) => {
    e.preventDefault();
    const f = Object.fromEntries(new FormData(tenantForm));
    const bodyOut = {};
    if (f.weight !== '') bodyOut.weight = num(f.weight);
    bodyOut.rate_limit = f.rate === '' ? null : { rate_per_second: num(f.rate), ...(f.burst === '' ? {} : { burst: num(f.burst) }) };
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
  replace(body,
    h('h3', {}, 'Tenants'),
    table([
      { label: 'tenant', value: (x) => x.tenant_id },
      { label: 'weight', value: (x) => String(x.weight) },
      { label: 'rate limit', value: (x) => (x.rate_limit ? `${x.rate_limit.rate_per_second}/s, burst ${x.rate_limit.burst ?? 1}` : 'none') },
    ], t.tenants),
    tenantForm,
    h('h3', {}, 'Rate limits by task type'),
    table([
      { label: 'task type', value: (x) => x.task_type },
      { label: 'starts/s', value: (x) => String(x.rate_per_second) },
      { label: 'burst', value: (x) => String(x.burst) },
      { label: '', value: (x) => h('button', { onclick: () => act(`Remove limit ${x.task_type}`, () => api('DELETE', `/api/v1/rate-limits/${seg(x.task_type)}`)) }, 'Remove') },
    ], rl.rate_limits),
    limitForm);
}
