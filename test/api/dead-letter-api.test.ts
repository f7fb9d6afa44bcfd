import { expect } from 'chai';
import { apiFixture, ApiFixture } from '../helpers/api-fixture';

/** Dead-letter routes through app.inject, on a real SQLite store with a manual clock. */
describe('REST: dead-letter queue', () => {
  let f: ApiFixture;
  beforeEach(async () => {
    f = await apiFixture();
  });
  afterEach(async () => f.close());

  /** Stores a task and drives it to DEAD through the store, as the dispatcher would. */
  async function deadTask(body: Record<string, unknown>): Promise<string> {
    const id = (await f.service.submit({ task_type: 'fail', max_retries: 0, ...body })).task_id;
    const [claimed] = await f.store.claimTasks([id], 'worker-1', f.clock.now(), 60_000);
    await f.store.completeAttempts(
      [
        {
          taskId: id,
          attempt: claimed.attempt,
          state: 'DEAD',
          retryAt: null,
          result: null,
          durationMs: 3,
          error: { message: 'boom', type: 'Error', retryable: true },
        },
      ],
      f.clock.now(),
    );
    return id;
  }

  it('lists DEAD tasks with filters (task_type, queue, tenant, since) and pagination', async () => {
    const a = await deadTask({ queue: 'mail', metadata: { tenant_id: 'acme' } });
    f.clock.advance(60_000);
    const b = await deadTask({ queue: 'sms', metadata: { tenant_id: 'other' } });
    await f.service.submit({ task_type: 'noop' }); // not dead
    const all = (await f.app.inject({ method: 'GET', url: '/api/v1/dead-letter' })).json();
    expect(all.tasks.map((t: any) => t.task_id)).to.deep.equal([b, a]);
    expect(all.tasks[0]).to.include({ status: 'DEAD' });
    const q = (url: string) => f.app.inject({ method: 'GET', url }).then((r) => r.json().tasks.map((t: any) => t.task_id));
    expect(await q('/api/v1/dead-letter?queue=mail')).to.deep.equal([a]);
    expect(await q('/api/v1/dead-letter?tenant=other')).to.deep.equal([b]);
    expect(await q('/api/v1/dead-letter?task_type=noop')).to.deep.equal([]);
    const since = new Date(f.clock.now() - 1000).toISOString();
    expect(await q(`/api/v1/dead-letter?since=${since}`)).to.deep.equal([b]);
    const page1 = (await f.app.inject({ method: 'GET', url: '/api/v1/dead-letter?limit=1' })).json();
    const page2 = (await f.app.inject({ method: 'GET', url: `/api/v1/dead-letter?limit=1&cursor=${page1.next_cursor}` })).json();
    expect([...page1.tasks, ...page2.tasks].map((t: any) => t.task_id)).to.deep.equal([b, a]);
    expect(page2.next_cursor).to.equal(null);
    const bad = await f.app.inject({ method: 'GET', url: '/api/v1/dead-letter?since=yesterday' });
    expect(bad.statusCode).to.equal(400);
    expect(bad.json().error.details.field).to.equal('since');
    // An unescaped + in a query string arrives as a space: the message says how to send it.
    const plus = await f.app.inject({ method: 'GET', url: '/api/v1/dead-letter?since=2020-01-01T00:00:00+02:00' });
    expect(plus.statusCode).to.equal(400);
    expect(plus.json().error.message).to.include('%2B');
    const escaped = await f.app.inject({ method: 'GET', url: '/api/v1/dead-letter?since=2020-01-01T00:00:00%2B02:00' });
    expect(escaped.statusCode, escaped.body).to.equal(200);
  });

  it('delete, then the same keyed request again: 409 IDEMPOTENCY_CONFLICT with task_deleted (not a replay of a task that is gone, not a second run)', async () => {
    const body = { task_type: 'fail', max_retries: 0, idempotency_key: 'once' };
    const id = await deadTask(body);
    expect((await f.app.inject({ method: 'DELETE', url: `/api/v1/dead-letter/${id}` })).statusCode).to.equal(200);
    for (const [url, payload, field] of [
      ['/api/v1/tasks', body, 'idempotency_key'],
      ['/api/v1/tasks/batch', { tasks: [{ task_type: 'noop' }, body] }, 'tasks[1].idempotency_key'],
    ] as const) {
      const res = await f.app.inject({ method: 'POST', url, payload });
      expect(res.statusCode, url).to.equal(409);
      expect(res.json().error).to.include({ code: 'IDEMPOTENCY_CONFLICT' });
      expect(res.json().error.details).to.include({ field, task_id: id, task_deleted: true });
      expect(res.json().error.message).to.include('deleted');
    }
    expect(f.stored.filter((e) => e.taskType === 'noop')).to.deep.equal([]); // the batch stored nothing
  });

  it('replay: 200, back to PENDING with a fresh budget and handed to its owner; again → 409', async () => {
    const id = await deadTask({});
    const res = await f.app.inject({ method: 'POST', url: `/api/v1/dead-letter/${id}/replay` });
    expect(res.statusCode).to.equal(200);
    expect(res.json()).to.deep.equal({ task_id: id, status: 'PENDING' });
    expect(f.stored.map((e) => e.id)).to.include(id);
    const t = (await f.app.inject({ method: 'GET', url: `/api/v1/tasks/${id}?include=attempts` })).json();
    expect(t).to.include({ status: 'PENDING', attempts: 1 });
    expect(t.attempt_history.map((a: any) => a.outcome)).to.deep.equal(['DEAD']);
    const again = await f.app.inject({ method: 'POST', url: `/api/v1/dead-letter/${id}/replay` });
    expect(again.statusCode).to.equal(409);
    expect(again.json().error).to.include({ code: 'TASK_STATE_CONFLICT' });
    expect(again.json().error.details.state).to.equal('PENDING');
  });

  it('delete: 200 for a DEAD task, then 404; 409 for a task that is not DEAD', async () => {
    const id = await deadTask({});
    const live = (await f.service.submit({ task_type: 'noop' })).task_id;
    expect((await f.app.inject({ method: 'DELETE', url: `/api/v1/dead-letter/${live}` })).statusCode).to.equal(409);
    const del = await f.app.inject({ method: 'DELETE', url: `/api/v1/dead-letter/${id}` });
    expect(del.statusCode).to.equal(200);
    expect(del.json()).to.deep.equal({ task_id: id, deleted: true });
    expect((await f.app.inject({ method: 'GET', url: `/api/v1/tasks/${id}` })).statusCode).to.equal(404);
    expect((await f.app.inject({ method: 'DELETE', url: `/api/v1/dead-letter/${id}` })).statusCode).to.equal(404);
  });

  it('the dead-letter size is a metric', async () => {
    await deadTask({});
    await deadTask({});
    const text = (await f.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(text).to.contain('scheduler_dead_letter_tasks 2');
  });

  it("a workflow's DEAD task cannot be deleted (409 TASK_IN_WORKFLOW: its workflow keeps it); replay stays open", async () => {
    const wf = await f.app.inject({
      method: 'POST',
      url: '/api/v1/workflows',
      payload: {
        tasks: [
          { task_id: 'y', task_type: 'fail', max_retries: 0 },
          { task_id: 'z', task_type: 'noop', dependencies: ['y'] },
        ],
      },
    });
    expect(wf.statusCode, wf.body).to.equal(202);
    const id = wf.json().task_ids.y as string;
    // Not DEAD yet: not in the dead-letter queue, which says so first (not "replay it instead").
    const early = await f.app.inject({ method: 'DELETE', url: `/api/v1/dead-letter/${id}` });
    expect(early.statusCode).to.equal(409);
    expect(early.json().error).to.include({ code: 'TASK_STATE_CONFLICT' });
    expect(early.json().error.details).to.include({ task_id: id, state: 'PENDING' });
    const [claimed] = await f.store.claimTasks([id], 'worker-1', f.clock.now(), 60_000);
    const dead = { taskId: id, attempt: claimed.attempt, state: 'DEAD' as const, retryAt: null, result: null, durationMs: 3 };
    await f.store.completeAttempts([{ ...dead, error: { message: 'boom', type: 'Error', retryable: true } }], f.clock.now());
    const del = await f.app.inject({ method: 'DELETE', url: `/api/v1/dead-letter/${id}` });
    expect(del.statusCode).to.equal(409);
    expect(del.json().error).to.include({ code: 'TASK_IN_WORKFLOW' });
    expect(del.json().error.details).to.deep.equal({
      task_id: id,
      workflow_id: wf.json().workflow_id,
      operation: 'delete from the dead-letter queue',
    });
    expect((await f.store.getTask(id))?.state).to.equal('DEAD');
    const replay = await f.app.inject({ method: 'POST', url: `/api/v1/dead-letter/${id}/replay` });
    expect(replay.statusCode, replay.body).to.equal(200);
  });
});
