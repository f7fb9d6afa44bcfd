import { expect } from 'chai';
import { apiFixture, ApiFixture } from '../helpers/api-fixture';
import { requestAs, TEST_KEYS as KEYS, testApiKeys as apiKeys } from '../helpers/api-keys';

/** Identity, isolation and the admin routes (issue 5), through app.inject with a manual clock. */
describe('REST: API keys, tenant isolation and admin routes', () => {
  let f: ApiFixture;
  beforeEach(async () => {
    f = await apiFixture({ apiKeys });
  });
  afterEach(async () => f.close());

  const as = requestAs(() => f);

  it('401 without a key or with an unknown one (WWW-Authenticate: Bearer); probes stay open', async () => {
    for (const key of [null, 'nope']) {
      const res = await as(key, 'GET', '/api/v1/tasks');
      expect(res.statusCode).to.equal(401);
      expect(res.headers['www-authenticate']).to.equal('Bearer');
      expect(res.json().error.code).to.equal('UNAUTHORIZED');
    }
    expect((await as(null, 'GET', '/healthz')).statusCode).to.equal(200);
    expect((await as(null, 'GET', '/readyz')).statusCode).to.equal(200);
    expect((await as(null, 'POST', '/api/v1/tasks', { task_type: 'noop' })).statusCode).to.equal(401);
  });

  it("a tenant's key acts for its tenant; a body cannot name another tenant", async () => {
    const ok = await as(KEYS.acme, 'POST', '/api/v1/tasks', { task_type: 'noop' });
    expect(ok.statusCode).to.equal(202);
    expect((await f.store.getTask(ok.json().task_id))?.tenantId).to.equal('acme');
    const same = await as(KEYS.acme, 'POST', '/api/v1/tasks', { task_type: 'noop', metadata: { tenant_id: 'acme' } });
    expect(same.statusCode).to.equal(202);
    const other = await as(KEYS.acme, 'POST', '/api/v1/tasks', { task_type: 'noop', metadata: { tenant_id: 'globex' } });
    expect(other.statusCode).to.equal(400);
    expect(other.json().error.details.field).to.equal('metadata.tenant_id');
    const batch = await as(KEYS.acme, 'POST', '/api/v1/tasks/batch', {
      tasks: [{ task_type: 'noop' }, { task_type: 'noop', metadata: { tenant_id: 'x' } }],
    });
    expect(batch.json().error.details.field).to.equal('tasks[1].metadata.tenant_id');
    const admin = await as(KEYS.admin, 'POST', '/api/v1/tasks', { task_type: 'noop', metadata: { tenant_id: 'globex' } });
    expect((await f.store.getTask(admin.json().task_id))?.tenantId).to.equal('globex');
  });

  it("another tenant's task is 404 on GET, cancel, PATCH and the dead-letter routes; lists show only one's own", async () => {
    const id = (await as(KEYS.acme, 'POST', '/api/v1/tasks', { task_type: 'noop', scheduled_at: '2030-01-01T00:00:00Z' })).json().task_id;
    for (const [method, url, body] of [
      ['GET', `/api/v1/tasks/${id}`],
      ['POST', `/api/v1/tasks/${id}/cancel`],
      ['PATCH', `/api/v1/tasks/${id}`, { priority: 'high' }],
      ['POST', `/api/v1/dead-letter/${id}/replay`],
      ['DELETE', `/api/v1/dead-letter/${id}`],
    ] as const) {
      const res = await as(KEYS.globex, method, url, body);
      expect(res.statusCode, `${method} ${url}`).to.equal(404);
      expect(res.json().error.code).to.equal('TASK_NOT_FOUND');
    }
    expect((await as(KEYS.acme, 'GET', `/api/v1/tasks/${id}`)).statusCode).to.equal(200);
    expect((await as(KEYS.admin, 'GET', `/api/v1/tasks/${id}`)).statusCode).to.equal(200);
    expect((await as(KEYS.globex, 'GET', '/api/v1/tasks')).json().tasks).to.deep.equal([]);
    expect((await as(KEYS.acme, 'GET', '/api/v1/tasks')).json().tasks.map((t: any) => t.task_id)).to.deep.equal([id]);
    expect((await as(KEYS.globex, 'POST', `/api/v1/tasks/${id}/cancel`)).statusCode).to.equal(404);
    expect((await as(KEYS.acme, 'POST', `/api/v1/tasks/${id}/cancel`)).statusCode).to.equal(200);
  });

  it('crons and workflows of another tenant are 404 too, and listings are scoped', async () => {
    const cron = (await as(KEYS.acme, 'POST', '/api/v1/cron-tasks', { name: 'c', cron_expression: '@daily', task_type: 'noop' })).json();
    expect(cron.metadata.tenant_id).to.equal('acme');
    for (const [method, url] of [
      ['GET', `/api/v1/cron-tasks/${cron.cron_id}`],
      ['DELETE', `/api/v1/cron-tasks/${cron.cron_id}`],
      ['GET', `/api/v1/cron-tasks/${cron.cron_id}/runs`],
    ] as const) {
      expect((await as(KEYS.globex, method, url)).statusCode, url).to.equal(404);
    }
    expect((await as(KEYS.globex, 'GET', '/api/v1/cron-tasks')).json().cron_tasks).to.deep.equal([]);
    const wf = await as(KEYS.acme, 'POST', '/api/v1/workflows', {
      tasks: [
        { task_id: 'a', task_type: 'noop' },
        { task_id: 'b', task_type: 'noop', dependencies: ['a'] },
      ],
    });
    expect(wf.statusCode).to.equal(202);
    const wid = wf.json().workflow_id;
    expect((await as(KEYS.globex, 'GET', `/api/v1/workflows/${wid}`)).statusCode).to.equal(404);
    expect((await as(KEYS.globex, 'POST', `/api/v1/workflows/${wid}/cancel`)).statusCode).to.equal(404);
    expect((await as(KEYS.globex, 'GET', '/api/v1/workflows')).json().workflows).to.deep.equal([]);
    expect((await as(KEYS.acme, 'GET', `/api/v1/workflows/${wid}`)).statusCode).to.equal(200);
  });

  it("a tenant's key naming another tenant in a listing's ?tenant= → 400 naming tenant (it got its own tenant's rows instead); its own tenant is fine", async () => {
    await as(KEYS.globex, 'POST', '/api/v1/cron-tasks', { name: 'g', cron_expression: '@daily', task_type: 'noop' });
    for (const url of ['/api/v1/cron-tasks', '/api/v1/workflows', '/api/v1/dead-letter', '/api/v1/tasks']) {
      const res = await as(KEYS.globex, 'GET', `${url}?tenant=acme`);
      expect(res.statusCode, `${url}: ${res.body}`).to.equal(400);
      expect(res.json().error.details.field).to.equal('tenant');
    }
    const own = await as(KEYS.globex, 'GET', '/api/v1/cron-tasks?tenant=globex');
    expect(own.statusCode).to.equal(200);
    expect(own.json().cron_tasks).to.have.length(1);
  });

  it("an admin lists one tenant's tasks with ?tenant=; a tenant's key may name its own", async () => {
    const later = '2030-01-01T00:00:00Z';
    const acme = (await as(KEYS.acme, 'POST', '/api/v1/tasks', { task_type: 'noop', scheduled_at: later })).json().task_id;
    const globex = (await as(KEYS.globex, 'POST', '/api/v1/tasks', { task_type: 'noop', scheduled_at: later })).json().task_id;
    const ids = async (key: string, url: string) => (await as(key, 'GET', url)).json().tasks.map((t: { task_id: string }) => t.task_id);
    expect(await ids(KEYS.admin, '/api/v1/tasks?tenant=acme')).to.deep.equal([acme]);
    expect(await ids(KEYS.admin, '/api/v1/tasks?tenant=globex&status=SCHEDULED')).to.deep.equal([globex]);
    expect(await ids(KEYS.admin, '/api/v1/tasks?tenant=nobody')).to.deep.equal([]);
    expect(await ids(KEYS.admin, '/api/v1/tasks')).to.have.members([acme, globex]);
    expect(await ids(KEYS.acme, '/api/v1/tasks?tenant=acme')).to.deep.equal([acme]);
  });

  it('admin routes answer 403 to a tenant key and work with the admin key; settings are stored and applied', async () => {
    for (const [method, url, body] of [
      ['PUT', '/api/v1/tenants/acme', { weight: 3 }],
      ['GET', '/api/v1/tenants'],
      ['PUT', '/api/v1/rate-limits/send_email', { rate_per_second: 100, burst: 10 }],
      ['GET', '/api/v1/rate-limits'],
      ['GET', '/api/v1/audit'],
      ['GET', '/metrics'],
    ] as const) {
      const res = await as(KEYS.acme, method, url, body);
      expect(res.statusCode, url).to.equal(403);
      expect(res.json().error.code).to.equal('FORBIDDEN');
    }
    const put = await as(KEYS.admin, 'PUT', '/api/v1/tenants/acme', { weight: 3, rate_limit: { rate_per_second: 50 } });
    expect(put.json()).to.deep.equal({ tenant_id: 'acme', weight: 3, rate_limit: { rate_per_second: 50, burst: 1 } });
    expect(f.limits.weightOf('acme')).to.equal(3);
    expect(f.limits.tenantBucket('acme')?.ratePerSecond).to.equal(50);
    expect(await f.store.listTenantSettings()).to.deep.equal([
      { tenantId: 'acme', weight: 3, rateLimit: { ratePerSecond: 50, burst: 1 }, updatedAt: f.clock.now() },
    ]);
    expect((await as(KEYS.admin, 'GET', '/api/v1/tenants')).json().tenants).to.deep.equal([
      { tenant_id: 'acme', weight: 3, rate_limit: { rate_per_second: 50, burst: 1 } },
    ]);
    expect((await as(KEYS.admin, 'PUT', '/api/v1/rate-limits/echo', { rate_per_second: 100, burst: 10 })).statusCode).to.equal(200);
    expect(f.limits.typeBucket('echo')?.burst).to.equal(10);
    expect((await as(KEYS.admin, 'GET', '/api/v1/rate-limits')).json().rate_limits).to.deep.equal([
      { task_type: 'echo', rate_per_second: 100, burst: 10 },
    ]);
    expect((await as(KEYS.admin, 'DELETE', '/api/v1/rate-limits/echo')).statusCode).to.equal(200);
    expect(f.limits.typeBucket('echo')).to.equal(null);
    expect(await f.store.listTaskTypeLimits()).to.deep.equal([]);
    for (const id of ['toString', 'constructor', 'valueOf']) {
      // Ids named like Object.prototype members: a PUT leaving a field out read the prototype's function (500).
      const weight = await as(KEYS.admin, 'PUT', `/api/v1/tenants/${id}`, { weight: 2 });
      expect(weight.statusCode, `${id}: ${weight.body}`).to.equal(200);
      expect(weight.json()).to.deep.equal({ tenant_id: id, weight: 2, rate_limit: null });
      const none = await as(KEYS.admin, 'PUT', `/api/v1/tenants/${id}`, { rate_limit: null });
      expect(none.json()).to.deep.equal({ tenant_id: id, weight: 2, rate_limit: null });
    }
    expect((await f.store.listTenantSettings()).map((t) => t.tenantId).sort()).to.include.members(['constructor', 'toString', 'valueOf']);
    // A PUT leaving the weight out stores the weight in force, the default 1 too (it stored none,
    // so a weight added to the config file later reached the tenant, against TENANTS.md).
    const limitOnly = await as(KEYS.admin, 'PUT', '/api/v1/tenants/delta', { rate_limit: null });
    expect(limitOnly.json()).to.deep.equal({ tenant_id: 'delta', weight: 1, rate_limit: null });
    expect((await f.store.listTenantSettings()).find((t) => t.tenantId === 'delta')).to.include({ weight: 1, rateLimit: null });
    for (const [url, body, field] of [
      ['/api/v1/tenants/acme', { weight: 0 }, 'weight'],
      ['/api/v1/tenants/acme', { weight: 5e-324 }, 'weight'],
      ['/api/v1/tenants/acme', { weight: 0.0009 }, 'weight'],
      ['/api/v1/tenants/acme', {}, 'body'],
      ['/api/v1/rate-limits/echo', { rate_per_second: -1 }, 'rate_per_second'],
      ['/api/v1/rate-limits/echo', { rate_per_second: 1e-9 }, 'rate_per_second'],
      ['/api/v1/rate-limits/echo', { rate_per_second: 1, burst: 0.5 }, 'burst'],
      ['/api/v1/rate-limits/echo', { rate_per_second: 1, burst: 1.5 }, 'burst'],
      ['/api/v1/tenants/acme', { rate_limit: { rate_per_second: 1, burst: 2.5 } }, 'rate_limit.burst'],
      ['/api/v1/rate-limits/no_such_type', { rate_per_second: 1 }, 'task_type'],
      [`/api/v1/tenants/${'a'.repeat(201)}`, { weight: 1 }, 'id'],
    ] as const) {
      const res = await as(KEYS.admin, 'PUT', url, body);
      expect(res.statusCode, JSON.stringify(body)).to.equal(400);
      expect(res.json().error.details.field).to.equal(field);
    }
  });
});

describe('REST: backpressure at submission', () => {
  let f: ApiFixture;
  afterEach(async () => f.close());

  it('a tenant over its submission rate gets 429 with Retry-After; nothing is stored; it passes once a token is back', async () => {
    f = await apiFixture({ submitRateLimit: { ratePerSecond: 2, burst: 2 } });
    const submit = () => f.app.inject({ method: 'POST', url: '/api/v1/tasks', payload: { task_type: 'noop' } });
    expect((await submit()).statusCode).to.equal(202);
    expect((await submit()).statusCode).to.equal(202);
    const refused = await submit();
    expect(refused.statusCode).to.equal(429);
    expect(refused.headers['retry-after']).to.equal('1');
    expect(refused.json().error).to.include({ code: 'RATE_LIMITED' });
    expect((await f.store.countByState()).PENDING).to.equal(2);
    f.clock.advance(500);
    expect((await submit()).statusCode).to.equal(202);
  });

  it('a waiting cap sheds low first (80 %), then medium (90 %), high only at the cap: 503 with Retry-After', async () => {
    f = await apiFixture({ maxWaitingTasks: 10 });
    const submit = (priority: string) => f.app.inject({ method: 'POST', url: '/api/v1/tasks', payload: { task_type: 'noop', priority } });
    for (let i = 0; i < 8; i++) expect((await submit('low')).statusCode).to.equal(202);
    const low = await submit('low');
    expect(low.statusCode).to.equal(503);
    expect(low.headers['retry-after']).to.equal('5');
    expect(low.json().error).to.include({ code: 'OVERLOADED' });
    expect(low.json().error.details).to.include({ scope: 'global', priority: 'low', waiting: 8, cap: 10 });
    expect((await submit('medium')).statusCode).to.equal(202);
    expect((await submit('medium')).statusCode).to.equal(503);
    expect((await submit('high')).statusCode).to.equal(202);
    expect((await submit('high')).statusCode).to.equal(503);
    expect((await f.store.countByState()).PENDING).to.equal(10);
    f.guard.refresh(await f.store.countWaitingByTenant()); // exact count: still 10 waiting
    expect((await submit('high')).statusCode).to.equal(503);
  });

  for (const [name, settings, code] of [
    ['rate limit', { submitRateLimit: { ratePerSecond: 1, burst: 1 } }, 429],
    ['waiting cap', { maxWaitingTasks: 1 }, 503],
  ] as const) {
    it(`a repeat of an acknowledged keyed submission is answered as a replay while the ${name} refuses new tasks (${code})`, async () => {
      f = await apiFixture(settings);
      const post = (payload: object) => f.app.inject({ method: 'POST', url: '/api/v1/tasks', payload });
      const batch = (tasks: object[]) => f.app.inject({ method: 'POST', url: '/api/v1/tasks/batch', payload: { tasks } });
      const keyed = { task_type: 'noop', priority: 'high', idempotency_key: 'order-7' };
      const first = await post(keyed);
      expect(first.statusCode).to.equal(202);
      const id = first.json().task_id;
      expect((await post({ task_type: 'noop', priority: 'high' })).statusCode).to.equal(code);
      // Its repeat (the client lost the 202) gets its task back.
      const again = await post(keyed);
      expect(again.statusCode).to.equal(200);
      expect(again.json()).to.include({ task_id: id, idempotent_replayed: true });
      // The same key with another request is refused by the backpressure, neither 409 nor stored.
      expect((await post({ ...keyed, payload: 2 })).statusCode).to.equal(code);
      // A batch of the repeat and a new task is refused whole; repeats alone are answered.
      expect((await batch([keyed, { task_type: 'noop', priority: 'high' }])).statusCode).to.equal(code);
      const repeats = await batch([keyed, keyed]);
      expect(repeats.statusCode, repeats.body).to.equal(202);
      expect(
        repeats.json().tasks.map((t: { task_id: string; idempotent_replayed?: boolean }) => [t.task_id, t.idempotent_replayed]),
      ).to.deep.equal([
        [id, true],
        [id, true],
      ]);
      expect((await f.store.countByState()).PENDING).to.equal(1);
    });
  }

  it('a per-tenant cap refuses only that tenant', async () => {
    f = await apiFixture({ maxWaitingPerTenant: 2 });
    const submit = (tenant: string) =>
      f.app.inject({
        method: 'POST',
        url: '/api/v1/tasks',
        payload: { task_type: 'noop', priority: 'high', metadata: { tenant_id: tenant } },
      });
    expect((await submit('a')).statusCode).to.equal(202);
    expect((await submit('a')).statusCode).to.equal(202);
    const refused = await submit('a');
    expect(refused.statusCode).to.equal(503);
    expect(refused.json().error.details).to.include({ scope: 'tenant', tenant_id: 'a' });
    expect((await submit('b')).statusCode).to.equal(202);
  });

  it('concurrent submissions count each other: a per-tenant cap is not overshot by requests in flight together', async () => {
    f = await apiFixture({ maxWaitingPerTenant: 5 });
    const body = (i: number) => ({ task_type: 'noop', priority: 'high', payload: { i }, metadata: { tenant_id: 'burst' } });
    // Twelve single submissions and a batch of three, all checked before any of them is stored.
    const singles = Array.from({ length: 12 }, (_, i) => f.app.inject({ method: 'POST', url: '/api/v1/tasks', payload: body(i) }));
    const batch = f.app.inject({ method: 'POST', url: '/api/v1/tasks/batch', payload: { tasks: [body(20), body(21), body(22)] } });
    const answers = await Promise.all([...singles, batch]);
    const acked = answers.reduce((n, r) => n + (r.statusCode === 202 ? (r.json().tasks?.length ?? 1) : 0), 0);
    for (const r of answers) expect([202, 503], r.body).to.include(r.statusCode);
    expect(acked, 'tasks acknowledged').to.equal(5);
    const stored = await f.app.inject({ method: 'GET', url: '/api/v1/tasks?tenant=burst&limit=100' });
    expect(stored.json().tasks).to.have.length(5);
    // A refused write gives its reservation back: the next one is refused by the count, not by leftovers.
    expect((await f.app.inject({ method: 'POST', url: '/api/v1/tasks', payload: body(30) })).statusCode).to.equal(503);
  });
});
