import { expect } from 'chai';
import { Writable } from 'node:stream';
import pino from 'pino';
import { apiFixture, ApiFixture } from '../helpers/api-fixture';

/** A store fault as the REST API shows it: `/readyz` 503 with the fault, writes 503 `STORE_UNAVAILABLE`, reads still served. */
describe('REST API under a store fault', () => {
  let f: ApiFixture;
  beforeEach(async () => {
    f = await apiFixture();
  });
  afterEach(() => f.close());

  const post = (url: string, payload: Record<string, unknown>) => f.app.inject({ method: 'POST', url, payload });

  it('a full disk: /readyz 503 with store_fault; submissions, batches and cancels 503 + Retry-After; reads answer; all back once it ends', async () => {
    const stored = (await post('/api/v1/tasks', { task_type: 'noop' })).json().task_id as string;
    f.store.health.report({
      kind: 'disk_full',
      target: '/data/scheduler.db',
      cause: 'SQLITE_FULL database or disk is full',
      recoverable: true,
      since: f.clock.now(),
    });
    const ready = await f.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).to.equal(503);
    expect(ready.json()).to.deep.include({ status: 'not_ready', store: false }); // a boolean, as the SDK's ReadinessView says
    expect(ready.json().store_fault).to.deep.include({
      fault: 'disk_full',
      target: '/data/scheduler.db',
      recoverable: true,
      since: new Date(f.clock.now()).toISOString(),
    });
    for (const res of [
      await post('/api/v1/tasks', { task_type: 'noop' }),
      await post('/api/v1/tasks/batch', { tasks: [{ task_type: 'noop' }] }),
      await f.app.inject({ method: 'POST', url: `/api/v1/tasks/${stored}/cancel` }),
    ]) {
      expect(res.statusCode, res.body).to.equal(503);
      expect(res.headers['retry-after']).to.equal('5');
      expect(res.json().error).to.deep.include({ code: 'STORE_UNAVAILABLE' });
      expect(res.json().error.details).to.deep.include({ fault: 'disk_full', target: '/data/scheduler.db', recoverable: true });
    }
    expect((await f.app.inject({ method: 'GET', url: `/api/v1/tasks/${stored}` })).statusCode).to.equal(200);
    f.store.health.recovered();
    const again = await f.app.inject({ method: 'GET', url: '/readyz' });
    expect(again.statusCode).to.equal(200);
    expect(again.json()).to.deep.include({ status: 'ready', store: true });
    expect((await post('/api/v1/tasks', { task_type: 'noop' })).statusCode).to.equal(202);
  });

  it('a read that fails while the store has a fault answers its 503 STORE_UNAVAILABLE, not 500; without a fault it stays 500', async () => {
    const stored = (await post('/api/v1/tasks', { task_type: 'noop' })).json().task_id as string;
    const store = f.store as unknown as { getTask: (id: string) => Promise<unknown> };
    store.getTask = async () => {
      throw Object.assign(new Error('connection closed'), { name: 'MongoNetworkError' });
    };
    expect((await f.app.inject({ method: 'GET', url: `/api/v1/tasks/${stored}` })).statusCode).to.equal(500);
    f.store.health.report({
      kind: 'connection_lost',
      target: 'mongodb://db:27017',
      cause: 'no writable server',
      recoverable: true,
      since: f.clock.now(),
    });
    const res = await f.app.inject({ method: 'GET', url: `/api/v1/tasks/${stored}` });
    expect(res.statusCode, res.body).to.equal(503);
    expect(res.headers['retry-after']).to.equal('5');
    expect(res.json().error).to.deep.include({ code: 'STORE_UNAVAILABLE' });
    expect(res.json().error.details).to.deep.include({ fault: 'connection_lost', target: 'mongodb://db:27017', recoverable: true });
  });

  it('a refused request writes no line at info or above: the fault is logged once by the store (a helper saw 437 lines in 15 s)', async () => {
    await f.close();
    const lines: Array<{ level: number; msg: string }> = [];
    const stream = new Writable({
      write(chunk, _enc, done) {
        for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
        done();
      },
    });
    f = await apiFixture({}, pino({ level: 'info' }, stream));
    f.store.health.report({
      kind: 'stalled',
      target: '/data/scheduler.db',
      cause: 'SQLITE_BUSY database is locked',
      recoverable: true,
      since: 0,
    });
    for (let i = 0; i < 20; i++) expect((await post('/api/v1/tasks', { task_type: 'noop' })).statusCode).to.equal(503);
    expect(lines.filter((l) => l.level >= 30).map((l) => l.msg)).to.deep.equal([]);
  });
});
