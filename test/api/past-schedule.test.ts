import { expect } from 'chai';
import { ReadyQueues } from '../../src/domain/ready-queues';
import { apiFixture, ApiFixture, sendJson } from '../helpers/api-fixture';

/**
 * A `scheduled_at` already past is due at the submission (or PATCH), not then: a task cannot have
 * waited before it existed. Found by a fresh-clone trial: a `low` task dated 2020 counted as six
 * years overdue, so priority aging (60 s) ran it ahead of `high` tasks submitted before it, and
 * one dated year 0 put 4,000 years into the dispatch-lag histogram.
 */
describe('REST: a scheduled_at in the past is due now', () => {
  let f: ApiFixture;
  beforeEach(async () => {
    f = await apiFixture();
  });
  afterEach(async () => f.close());

  const send = (method: 'POST' | 'PATCH', url: string, body: unknown) => sendJson(f, method, url, body);

  it('keeps scheduled_at as given, with due_at the submission time, in single, batch and workflow submissions', async () => {
    const now = f.clock.now();
    const one = (await send('POST', '/api/v1/tasks', { task_type: 'echo', priority: 'low', scheduled_at: '2020-01-01T00:00:00Z' })).json();
    const batch = (
      await send('POST', '/api/v1/tasks/batch', { tasks: [{ task_type: 'echo', scheduled_at: '0000-01-01T00:00:00Z' }] })
    ).json();
    const wf = (
      await send('POST', '/api/v1/workflows', { tasks: [{ task_id: 'a', task_type: 'echo', scheduled_at: '1999-12-31T23:59:59Z' }] })
    ).json();
    const ids = [one.task_id, batch.tasks[0].task_id, wf.task_ids.a];
    const read = await Promise.all(ids.map((id) => f.service.get(id)));
    expect(read.map((t) => t.scheduled_at)).to.deep.equal([
      '2020-01-01T00:00:00.000Z',
      '0000-01-01T00:00:00.000Z',
      '1999-12-31T23:59:59.000Z',
    ]);
    for (const t of read) expect(t).to.include({ status: 'PENDING', due_at: new Date(now).toISOString() });
    expect(f.stored.filter((e) => ids.includes(e.id)).map((e) => e.dueAt)).to.deep.equal([now, now, now]);
  });

  it('a backdated low task no longer runs ahead of high tasks submitted before it', async () => {
    const high = (await send('POST', '/api/v1/tasks', { task_type: 'echo', priority: 'high' })).json().task_id;
    f.clock.advance(5);
    const low = (await send('POST', '/api/v1/tasks', { task_type: 'echo', priority: 'low', scheduled_at: '2020-01-01T00:00:00Z' })).json()
      .task_id;
    const q = new ReadyQueues({ agingMs: f.config.priorityAgingMs });
    for (const e of f.stored) q.add(e);
    expect(q.take(2, f.clock.now()).map((e) => e.id)).to.deep.equal([high, low]);
  });

  it('PATCH to a past time: PENDING, due at the PATCH; scheduled_at as given', async () => {
    const id = (await send('POST', '/api/v1/tasks', { task_type: 'echo', scheduled_at: '2099-01-01T00:00:00Z' })).json().task_id;
    f.clock.advance(1_000);
    const res = await send('PATCH', `/api/v1/tasks/${id}`, { scheduled_at: '2001-01-01T00:00:00Z' });
    expect(res.json()).to.include({
      status: 'PENDING',
      scheduled_at: '2001-01-01T00:00:00.000Z',
      due_at: new Date(f.clock.now()).toISOString(),
    });
  });
});
