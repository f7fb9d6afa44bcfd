import { expect } from 'chai';
import { hashApiKey } from '../../src/tenancy/api-keys';
import { apiFixture, ApiFixture } from '../helpers/api-fixture';

const KEYS = { acme: 'key-acme-pull', admin: 'key-admin-pull' };

/**
 * `POST /api/v1/queues/{queue}/lease` through `app.inject` without actors: who may lease, which
 * queues are pull queues, and the answer when no dispatcher runs. The hand-out itself is in
 * test/integration/pull-lease.test.ts.
 */
describe('pull lease requests (routes, no dispatcher)', () => {
  let f: ApiFixture;
  before(async () => {
    f = await apiFixture({
      apiKeys: [
        { sha256: hashApiKey(KEYS.acme), tenant: 'acme' },
        { sha256: hashApiKey(KEYS.admin), admin: true },
      ],
      // redisUrl is required with a stream queue; nothing connects to it in this fixture.
      redisUrl: 'redis://127.0.0.1:1',
      externalQueues: { jobs: { transport: 'http' }, mail: {} },
    });
  });
  after(() => f.close());

  const lease = (queue: string, body: unknown, key: string = KEYS.admin) =>
    f.app.inject({
      method: 'POST',
      url: `/api/v1/queues/${queue}/lease`,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });

  it('a stream queue and an unknown queue are 404 NOT_PULL_QUEUE with the queue and its transport', async () => {
    const stream = await lease('mail', { worker_id: 'w' });
    expect(stream.statusCode).to.equal(404);
    expect(stream.json().error).to.deep.include({ code: 'NOT_PULL_QUEUE' });
    expect(stream.json().error.details).to.deep.equal({ queue: 'mail', transport: 'stream' });
    const unknown = await lease('nope', { worker_id: 'w' });
    expect(unknown.json().error.details).to.deep.equal({ queue: 'nope', transport: null });
  });

  it("a tenant's key is 403 FORBIDDEN (a worker takes every tenant's tasks); no key is 401", async () => {
    const res = await lease('jobs', { worker_id: 'w' }, KEYS.acme);
    expect(res.statusCode).to.equal(403);
    expect(res.json().error.code).to.equal('FORBIDDEN');
    const none = await f.app.inject({ method: 'POST', url: '/api/v1/queues/jobs/lease', payload: { worker_id: 'w' } });
    expect(none.statusCode).to.equal(401);
  });

  it('without a dispatcher a valid request is 503 SERVICE_UNAVAILABLE; a bad body is 400 first', async () => {
    const res = await lease('jobs', { worker_id: 'w', wait_s: 1 });
    expect(res.statusCode).to.equal(503);
    expect(res.json().error.code).to.equal('SERVICE_UNAVAILABLE');
    const bad = await lease('jobs', { worker_id: 'w', max: 'all' });
    expect(bad.statusCode).to.equal(400);
    expect(bad.json().error.details.field).to.equal('max');
  });

  it('logs: a task of a queue that is not external is 409 NOT_EXTERNAL_TASK', async () => {
    const sub = await f.app.inject({
      method: 'POST',
      url: '/api/v1/tasks',
      headers: { authorization: `Bearer ${KEYS.admin}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ task_type: 'echo' }),
    });
    const id = sub.json().task_id as string;
    const res = await f.app.inject({
      method: 'POST',
      url: `/api/v1/tasks/${id}/logs`,
      headers: { authorization: `Bearer ${KEYS.admin}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ attempt: 1, lines: [{ level: 'info', msg: 'x' }] }),
    });
    expect(res.statusCode).to.equal(409);
    expect(res.json().error.code).to.equal('NOT_EXTERNAL_TASK');
  });
});
