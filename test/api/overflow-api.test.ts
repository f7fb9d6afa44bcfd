import { expect } from 'chai';
import { apiFixture, ApiFixture, sendJson } from '../helpers/api-fixture';

/** maxWaitingTasks 10: low is shed from 8 waiting; the hold takes at most 3; released under 5 waiting. */
const OVERFLOW = { maxWaitingTasks: 10, overflow: { enabled: true, lowWaterMark: 0.5, maxTasks: 3 } };

describe('REST: priority shedding into the overflow hold', () => {
  let f: ApiFixture;
  afterEach(async () => f.close());

  const submit = (body: Record<string, unknown>) => sendJson(f, 'POST', '/api/v1/tasks', { task_type: 'noop', ...body });
  /** `n` medium tasks for later: waiting, and they stay waiting (the fixture runs no actors). */
  async function fill(n: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const res = await submit({ priority: 'medium', scheduled_at: '2030-01-01T00:00:00Z' });
      expect(res.statusCode).to.equal(202);
      ids.push(res.json().task_id);
    }
    return ids;
  }

  it('over the threshold a low task is accepted (202) as OVERFLOW, shown by GET and the list, and offered to no owner', async () => {
    f = await apiFixture(OVERFLOW);
    await fill(8);
    const offered = f.stored.length;
    const res = await submit({ priority: 'low', payload: { n: 1 } });
    expect(res.statusCode).to.equal(202);
    expect(res.json()).to.include({ status: 'OVERFLOW', scheduled_at: null });
    const id = res.json().task_id;
    expect(f.stored.length).to.equal(offered);
    const got = await f.app.inject({ method: 'GET', url: `/api/v1/tasks/${id}` });
    expect(got.json()).to.include({ task_id: id, status: 'OVERFLOW', priority: 'low' });
    const list = await f.app.inject({ method: 'GET', url: '/api/v1/tasks?status=OVERFLOW' });
    expect(list.statusCode).to.equal(200);
    expect(list.json().tasks.map((t: { task_id: string }) => t.task_id)).to.deep.equal([id]);
    // medium and high as without overflow
    expect((await submit({ priority: 'medium' })).json().status).to.equal('PENDING');
    expect((await submit({ priority: 'medium' })).statusCode).to.equal(503);
    expect((await submit({ priority: 'high' })).statusCode).to.equal(202);
    const metrics = (await f.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).to.match(/^scheduler_overflow_accepted_total 1$/m);
    expect(metrics).to.match(/^scheduler_overflow_tasks 1$/m);
    expect(metrics).to.match(/^scheduler_tasks\{state="OVERFLOW"\} 1$/m);
  });

  it('above the hard cap even low is refused with 503 and Retry-After; so it is when the hold is full', async () => {
    f = await apiFixture(OVERFLOW);
    await fill(8);
    for (let i = 0; i < 3; i++) expect((await submit({ priority: 'low' })).json().status).to.equal('OVERFLOW');
    const full = await submit({ priority: 'low' });
    expect(full.statusCode).to.equal(503);
    expect(full.headers['retry-after']).to.equal('5');
    expect(full.json().error).to.include({ code: 'OVERLOADED' });
    expect(full.json().error.details).to.include({ scope: 'overflow', waiting: 3, cap: 3 });
    await sendJson(f, 'POST', '/api/v1/tasks', { task_type: 'noop', priority: 'high' });
    await sendJson(f, 'POST', '/api/v1/tasks', { task_type: 'noop', priority: 'high' });
    const hard = await submit({ priority: 'low' });
    expect(hard.statusCode).to.equal(503);
    expect(hard.headers['retry-after']).to.equal('5');
    expect(hard.json().error.details).to.include({ scope: 'global', priority: 'low', waiting: 10, cap: 10 });
    expect((await f.store.countByState()).OVERFLOW).to.equal(3);
  });

  it('the release pass lets held tasks in oldest first as the waiting depth falls under the low-water mark', async () => {
    f = await apiFixture(OVERFLOW);
    const waiting = await fill(8);
    const held: string[] = [];
    for (let i = 0; i < 3; i++) held.push((await submit({ priority: 'low' })).json().task_id);
    expect(await f.overflow.pass()).to.equal(0); // 8 waiting: over the mark of 5
    for (const id of waiting.slice(0, 4))
      expect((await f.app.inject({ method: 'POST', url: `/api/v1/tasks/${id}/cancel` })).statusCode).to.equal(200);
    f.clock.advance(1000);
    expect(await f.overflow.pass()).to.equal(1); // 4 waiting: room for one
    expect(f.stored.slice(-1)[0]).to.include({ id: held[0], state: 'PENDING', dueAt: f.clock.now(), priority: 'low' });
    expect((await f.service.get(held[1])).status).to.equal('OVERFLOW');
    for (const id of waiting.slice(4)) await f.app.inject({ method: 'POST', url: `/api/v1/tasks/${id}/cancel` });
    expect(await f.overflow.pass()).to.equal(2);
    expect(f.stored.slice(-2).map((e) => e.id)).to.deep.equal(held.slice(1));
    const metrics = (await f.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).to.match(/^scheduler_overflow_released_total 3$/m);
    expect(metrics).to.match(/^scheduler_overflow_tasks 0$/m);
  });

  it('a held task can be cancelled (200) and changed by PATCH (it stays held; a later time is kept at release)', async () => {
    f = await apiFixture(OVERFLOW);
    await fill(8);
    const a = (await submit({ priority: 'low' })).json().task_id;
    const b = (await submit({ priority: 'low' })).json().task_id;
    const cancel = await f.app.inject({ method: 'POST', url: `/api/v1/tasks/${a}/cancel` });
    expect(cancel.statusCode).to.equal(200);
    expect(cancel.json()).to.include({ status: 'CANCELLED' });
    expect(f.ended).to.include(a);
    const patch = await sendJson(f, 'PATCH', `/api/v1/tasks/${b}`, { scheduled_at: '2026-06-01T13:00:00Z', payload: { v: 2 } });
    expect(patch.statusCode).to.equal(200);
    expect(patch.json()).to.include({ status: 'OVERFLOW', scheduled_at: '2026-06-01T13:00:00.000Z' });
    await f.store.releaseOverflow([b], f.clock.now());
    expect(await f.service.get(b)).to.include({ status: 'SCHEDULED', scheduled_at: '2026-06-01T13:00:00.000Z' });
  });

  it('an idempotent repeat of a held submission answers the held task (200, replayed), not a second one', async () => {
    f = await apiFixture(OVERFLOW);
    await fill(8);
    const body = { priority: 'low', payload: { order: 7 }, idempotency_key: 'order-7' };
    const first = await submit(body);
    expect(first.json().status).to.equal('OVERFLOW');
    const again = await submit(body);
    expect(again.statusCode).to.equal(200);
    expect(again.headers['idempotent-replayed']).to.equal('true');
    expect(again.json()).to.include({ task_id: first.json().task_id, status: 'OVERFLOW' });
    expect((await f.store.countByState()).OVERFLOW).to.equal(1);
  });

  it('a batch is held item by item: its low tasks over the threshold go to the hold, the rest as usual', async () => {
    f = await apiFixture(OVERFLOW);
    await fill(7);
    const res = await sendJson(f, 'POST', '/api/v1/tasks/batch', {
      tasks: [
        { task_type: 'noop', priority: 'low' },
        { task_type: 'noop', priority: 'low' },
        { task_type: 'noop', priority: 'high' },
      ],
    });
    expect(res.statusCode).to.equal(202);
    expect(res.json().tasks.map((t: { status: string }) => t.status)).to.deep.equal(['PENDING', 'OVERFLOW', 'PENDING']);
  });

  it('with overflow off (the default) a low task over the threshold is refused as before', async () => {
    f = await apiFixture({ maxWaitingTasks: 10 });
    await fill(8);
    expect((await submit({ priority: 'low' })).statusCode).to.equal(503);
  });
});
