import { expect } from 'chai';
import { apiFixture, ApiFixture } from '../helpers/api-fixture';

/** PATCH /api/v1/tasks/{id}: change a task that has not started; 409 once it has. */
describe('REST: PATCH a task that has not started', () => {
  let f: ApiFixture;
  beforeEach(async () => {
    f = await apiFixture();
  });
  afterEach(async () => f.close());

  const patch = (id: string, body: unknown) =>
    f.app.inject({
      method: 'PATCH',
      url: `/api/v1/tasks/${id}`,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });
  const submit = async (body: Record<string, unknown>) => (await f.service.submit({ task_type: 'echo', ...body })).task_id;

  it('reschedules later (→ SCHEDULED) and earlier (→ PENDING); the partition owner is told', async () => {
    const id = await submit({ payload: 1 });
    f.stored.length = 0;
    const later = await patch(id, { scheduled_at: '2026-06-01T13:00:00Z' });
    expect(later.statusCode).to.equal(200);
    expect(later.json()).to.include({ status: 'SCHEDULED', scheduled_at: '2026-06-01T13:00:00.000Z', due_at: '2026-06-01T13:00:00.000Z' });
    expect(f.stored.map((e) => [e.id, e.dueAt])).to.deep.equal([[id, Date.parse('2026-06-01T13:00:00Z')]]);
    const now = await patch(id, { scheduled_at: null });
    expect(now.json()).to.include({ status: 'PENDING', scheduled_at: null });
  });

  it('changes priority and payload without touching the schedule', async () => {
    const id = await submit({ payload: { v: 1 }, scheduled_at: '2026-06-01T13:00:00Z' });
    const res = await patch(id, { priority: 'high', payload: { v: 2 } });
    expect(res.statusCode).to.equal(200);
    expect(res.json()).to.include({ status: 'SCHEDULED', priority: 'high' });
    expect(res.json().payload).to.deep.equal({ v: 2 });
  });

  it('a RUNNING or finished task → 409 with its state; unknown → 404', async () => {
    const id = await submit({});
    await f.store.claimTasks([id], 'worker-1', f.clock.now(), 60_000);
    const res = await patch(id, { priority: 'low' });
    expect(res.statusCode).to.equal(409);
    expect(res.json().error).to.include({ code: 'TASK_STATE_CONFLICT' });
    expect(res.json().error.details.state).to.equal('RUNNING');
    expect((await patch('nope', { priority: 'low' })).statusCode).to.equal(404);
  });

  it('bad bodies → 400 naming the field; nothing changes', async () => {
    const id = await submit({ payload: 'keep' });
    const cases: Array<[unknown, string]> = [
      [{}, 'body'],
      [{ scheduled_at: '2026-02-30T00:00:00Z' }, 'scheduled_at'],
      [{ scheduled_at: 'soon' }, 'scheduled_at'],
      [{ priority: 'urgent' }, 'priority'],
      [{ task_type: 'noop' }, 'task_type'],
    ];
    for (const [body, field] of cases) {
      const res = await patch(id, body);
      expect(res.statusCode, JSON.stringify(body)).to.equal(400);
      expect(res.json().error.details.field, JSON.stringify(body)).to.equal(field);
    }
    expect((await f.service.get(id)).payload).to.equal('keep');
  });
});
