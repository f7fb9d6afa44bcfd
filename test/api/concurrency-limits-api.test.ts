import { expect } from 'chai';
import { DispatchLimits } from '../../src/domain/dispatch-limits';
import { TenantAdmin } from '../../src/services/tenant-admin';
import { apiFixture, ApiFixture } from '../helpers/api-fixture';
import { requestAs, TEST_KEYS as KEYS, testApiKeys as apiKeys } from '../helpers/api-keys';

/** Concurrency keys through app.inject: the limit routes (admin), and the key on submissions. */
describe('REST: concurrency keys and /api/v1/concurrency-limits', () => {
  let f: ApiFixture;
  beforeEach(async () => {
    f = await apiFixture({ apiKeys });
  });
  afterEach(async () => f.close());

  const as = requestAs(() => f);
  const admin = (method: string, url: string, payload?: unknown) => as(KEYS.admin, method, url, payload);

  it('PUT sets a limit (stored, applied at once), GET and the list show it, DELETE makes the key unlimited', async () => {
    const put = await admin('PUT', '/api/v1/concurrency-limits/host:api.example.com', { max_running: 3 });
    expect(put.statusCode).to.equal(200);
    expect(put.json()).to.deep.equal({ key: 'host:api.example.com', max_running: 3, running: 0 });
    expect(f.limits.concurrency.maxRunningOf('host:api.example.com')).to.equal(3);
    expect(await f.store.listConcurrencyLimits()).to.deep.equal([{ key: 'host:api.example.com', maxRunning: 3, updatedAt: f.clock.now() }]);

    f.limits.concurrency.tryAcquire('host:api.example.com', f.clock.now());
    expect((await admin('GET', '/api/v1/concurrency-limits/host:api.example.com')).json()).to.deep.equal({
      key: 'host:api.example.com',
      max_running: 3,
      running: 1,
    });
    expect((await admin('GET', '/api/v1/concurrency-limits/never-set')).json()).to.deep.equal({
      key: 'never-set',
      max_running: null,
      running: 0,
    });
    await admin('PUT', '/api/v1/concurrency-limits/a', { max_running: 1 });
    expect((await admin('GET', '/api/v1/concurrency-limits')).json()).to.deep.equal({
      concurrency_limits: [
        { key: 'a', max_running: 1, running: 0 },
        { key: 'host:api.example.com', max_running: 3, running: 1 },
      ],
    });

    const del = await admin('DELETE', '/api/v1/concurrency-limits/a');
    expect(del.statusCode).to.equal(200);
    expect(del.json()).to.deep.equal({ key: 'a', deleted: true });
    expect((await admin('DELETE', '/api/v1/concurrency-limits/a')).statusCode, 'idempotent').to.equal(200);
    expect(f.limits.concurrency.maxRunningOf('a')).to.equal(null);
    expect((await f.store.listConcurrencyLimits()).map((l) => l.key)).to.deep.equal(['host:api.example.com']);
  });

  it('stored limits are applied again at start-up (a restart keeps them)', async () => {
    await admin('PUT', '/api/v1/concurrency-limits/k', { max_running: 7 });
    const limits = new DispatchLimits();
    await new TenantAdmin({ store: f.store, clock: f.clock, config: f.config, limits }).loadStored();
    expect(limits.concurrency.maxRunningOf('k')).to.equal(7);
  });

  it('bad input is a 400 naming the field; nothing is stored', async () => {
    const cases: Array<[string, string, unknown, string]> = [
      ['PUT', '/api/v1/concurrency-limits/k', { max_running: 0 }, 'max_running'],
      ['PUT', '/api/v1/concurrency-limits/k', { max_running: 1.5 }, 'max_running'],
      ['PUT', '/api/v1/concurrency-limits/k', { max_running: '3' }, 'max_running'],
      ['PUT', '/api/v1/concurrency-limits/k', { max_running: 100_001 }, 'max_running'],
      ['PUT', '/api/v1/concurrency-limits/k', {}, 'max_running'],
      ['PUT', '/api/v1/concurrency-limits/k', { max_running: 3, burst: 1 }, 'burst'],
      ['PUT', '/api/v1/concurrency-limits/has%20space', { max_running: 3 }, 'key'],
      ['PUT', `/api/v1/concurrency-limits/${'x'.repeat(201)}`, { max_running: 3 }, 'key'],
      ['GET', '/api/v1/concurrency-limits/a%2Fb', undefined, 'key'],
      ['DELETE', '/api/v1/concurrency-limits/%C3%A9', undefined, 'key'],
    ];
    for (const [method, url, body, field] of cases) {
      const res = await admin(method, url, body);
      expect(res.statusCode, `${method} ${url} ${JSON.stringify(body)}`).to.equal(400);
      expect(res.json().error.details.field, `${method} ${url} ${JSON.stringify(body)}`).to.equal(field);
    }
    expect(await f.store.listConcurrencyLimits()).to.deep.equal([]);
  });

  it("the routes need an admin key: a tenant's key is 403, none is 401", async () => {
    for (const [method, url, body] of [
      ['PUT', '/api/v1/concurrency-limits/k', { max_running: 1 }],
      ['GET', '/api/v1/concurrency-limits/k'],
      ['DELETE', '/api/v1/concurrency-limits/k'],
      ['GET', '/api/v1/concurrency-limits'],
    ] as const) {
      expect((await as(KEYS.acme, method, url, body)).statusCode, `${method} ${url}`).to.equal(403);
      expect((await as(null, method, url, body)).statusCode, `${method} ${url}`).to.equal(401);
    }
    expect(await f.store.listConcurrencyLimits()).to.deep.equal([]);
  });

  it('a task carries its concurrency_key: single, batch, workflow and cron submissions; GET shows it', async () => {
    const single = await as(KEYS.acme, 'POST', '/api/v1/tasks', { task_type: 'noop', concurrency_key: 'customer-42' });
    expect(single.statusCode).to.equal(202);
    const got = (await as(KEYS.acme, 'GET', `/api/v1/tasks/${single.json().task_id}`)).json();
    expect(got.concurrency_key).to.equal('customer-42');
    expect(f.stored.at(-1)?.concurrencyKey).to.equal('customer-42');

    const plain = (await as(KEYS.acme, 'POST', '/api/v1/tasks', { task_type: 'noop' })).json();
    expect((await as(KEYS.acme, 'GET', `/api/v1/tasks/${plain.task_id}`)).json().concurrency_key).to.equal(null);

    const batch = await as(KEYS.acme, 'POST', '/api/v1/tasks/batch', {
      tasks: [{ task_type: 'noop', concurrency_key: 'b' }, { task_type: 'noop' }],
    });
    expect(batch.statusCode).to.equal(202);
    const [b0, b1] = batch.json().tasks.map((t: { task_id: string }) => t.task_id);
    expect((await f.store.getTask(b0))?.concurrencyKey).to.equal('b');
    expect((await f.store.getTask(b1))?.concurrencyKey ?? null).to.equal(null);

    const wf = await as(KEYS.acme, 'POST', '/api/v1/workflows', {
      workflow_name: 'w',
      tasks: [{ task_id: 'a', task_type: 'noop', concurrency_key: 'wf-key' }],
    });
    expect(wf.statusCode, wf.body).to.equal(202);
    const wfTaskId = (await f.store.listTasks({ limit: 10 })).tasks.find((t) => t.workflowId)?.id as string;
    expect((await f.store.getTask(wfTaskId))?.concurrencyKey).to.equal('wf-key');

    const cron = await as(KEYS.acme, 'POST', '/api/v1/cron-tasks', {
      name: 'c',
      cron_expression: '@daily',
      task_type: 'noop',
      concurrency_key: 'nightly',
    });
    expect(cron.statusCode, cron.body).to.equal(201);
    const read = (await as(KEYS.acme, 'GET', `/api/v1/cron-tasks/${cron.json().cron_id}`)).json();
    expect(read.concurrency_key).to.equal('nightly');
  });

  it('a malformed concurrency_key is a 400 naming it (single, batch, workflow, cron)', async () => {
    for (const [url, body, field] of [
      ['/api/v1/tasks', { task_type: 'noop', concurrency_key: '' }, 'concurrency_key'],
      ['/api/v1/tasks', { task_type: 'noop', concurrency_key: 'a b' }, 'concurrency_key'],
      ['/api/v1/tasks', { task_type: 'noop', concurrency_key: 'k'.repeat(201) }, 'concurrency_key'],
      ['/api/v1/tasks', { task_type: 'noop', concurrency_key: 42 }, 'concurrency_key'],
      [
        '/api/v1/tasks/batch',
        { tasks: [{ task_type: 'noop' }, { task_type: 'noop', concurrency_key: 'x/y' }] },
        'tasks[1].concurrency_key',
      ],
      [
        '/api/v1/workflows',
        { workflow_name: 'w', tasks: [{ task_id: 'a', task_type: 'noop', concurrency_key: '' }] },
        'tasks[0].concurrency_key',
      ],
      ['/api/v1/cron-tasks', { name: 'c', cron_expression: '@daily', task_type: 'noop', concurrency_key: 'ü' }, 'concurrency_key'],
    ] as const) {
      const res = await as(KEYS.acme, 'POST', url, body);
      expect(res.statusCode, `${url} ${JSON.stringify(body)}`).to.equal(400);
      expect(res.json().error.details.field, `${url} ${JSON.stringify(body)}`).to.equal(field);
    }
  });
});
