import { expect } from 'chai';
import { apiFixture, ApiFixture } from '../helpers/api-fixture';

describe('REST: task routes (app.inject, SQLite store, manual clock)', () => {
  let f: ApiFixture;
  beforeEach(async () => {
    f = await apiFixture();
  });
  afterEach(async () => f.close());

  const submit = (body: unknown) =>
    f.app.inject({ method: 'POST', url: '/api/v1/tasks', headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body) });

  it('POST /api/v1/tasks → 202 with task_id, status, scheduled_at, created_at; stored before the answer', async () => {
    const res = await submit({ task_type: 'echo', payload: { a: 1 } });
    expect(res.statusCode).to.equal(202);
    const ack = res.json();
    expect(ack).to.have.keys('task_id', 'status', 'scheduled_at', 'created_at');
    expect(ack.status).to.equal('PENDING');
    expect(ack.scheduled_at).to.equal(null);
    expect(ack.created_at).to.equal(new Date(f.clock.now()).toISOString());
    const stored = await f.store.getTask(ack.task_id);
    expect(stored?.state).to.equal('PENDING');
    expect(f.stored.map((e) => e.id)).to.deep.equal([ack.task_id]);
  });

  it('a future scheduled_at (with any offset) → SCHEDULED at that UTC instant', async () => {
    const res = await submit({ task_type: 'noop', scheduled_at: '2026-06-01T14:30:00+02:00' });
    expect(res.json().status).to.equal('SCHEDULED');
    expect(res.json().scheduled_at).to.equal('2026-06-01T12:30:00.000Z');
  });

  it('a past scheduled_at runs now (PENDING)', async () => {
    const res = await submit({ task_type: 'noop', scheduled_at: '2020-01-01T00:00:00Z' });
    expect(res.json().status).to.equal('PENDING');
  });

  it('GET /api/v1/tasks/{id} returns the contract fields with defaults applied', async () => {
    const { task_id } = (await submit({ task_type: 'echo', payload: 'x', metadata: { tenant_id: 'acme', correlation_id: 'c-1' } })).json();
    const res = await f.app.inject({ method: 'GET', url: `/api/v1/tasks/${task_id}` });
    expect(res.statusCode).to.equal(200);
    const t = res.json();
    expect(t).to.include({ task_id, task_type: 'echo', status: 'PENDING', priority: 'medium', queue: 'default', payload: 'x' });
    expect(t.metadata).to.deep.equal({ tenant_id: 'acme', correlation_id: 'c-1' });
    expect(t).to.include({ max_retries: 3, retry_backoff: 'exponential', retry_delay_seconds: 1, timeout_seconds: 300, attempts: 0 });
    for (const k of ['started_at', 'completed_at', 'duration_ms', 'worker_id', 'result', 'error']) expect(t[k], k).to.equal(null);
  });

  it('GET ?include=attempts adds the attempt history', async () => {
    const { task_id } = (await submit({ task_type: 'noop' })).json();
    const t = (await f.app.inject({ method: 'GET', url: `/api/v1/tasks/${task_id}?include=attempts` })).json();
    expect(t.attempt_history).to.deep.equal([]);
  });

  it('POST /api/v1/tasks/batch stores every task and acknowledges each', async () => {
    const tasks = Array.from({ length: 250 }, (_, i) => ({ task_type: 'echo', payload: i }));
    const res = await f.app.inject({
      method: 'POST',
      url: '/api/v1/tasks/batch',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ tasks }),
    });
    expect(res.statusCode).to.equal(202);
    expect(res.json().tasks).to.have.length(250);
    expect((await f.store.countByState()).PENDING).to.equal(250);
  });

  it('a batch reaches its partition owners in submission order: each entry carries its stored seq, increasing', async () => {
    const tasks = Array.from({ length: 250 }, () => ({ task_type: 'noop', scheduled_at: '2026-06-01T14:30:00Z' }));
    const res = await f.app.inject({
      method: 'POST',
      url: '/api/v1/tasks/batch',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ tasks }),
    });
    const ids = (res.json().tasks as Array<{ task_id: string }>).map((t) => t.task_id);
    expect(f.stored.map((e) => e.id)).to.deep.equal(ids);
    const seqs = f.stored.map((e) => e.seq);
    expect(
      seqs.every((s, i) => i === 0 || s > seqs[i - 1]),
      'increasing',
    ).to.equal(true);
    expect(seqs).to.deep.equal(await Promise.all(ids.map(async (id) => (await f.store.getTask(id))!.seq)));
  });

  it('GET /api/v1/tasks lists newest first, filters, and pages with a cursor', async () => {
    for (let i = 0; i < 7; i++) await submit({ task_type: i % 2 ? 'echo' : 'noop', queue: i < 3 ? 'q1' : 'q2' });
    const all: string[] = [];
    let cursor: string | null = null;
    do {
      const url: string = `/api/v1/tasks?limit=3${cursor ? `&cursor=${cursor}` : ''}`;
      const page: any = (await f.app.inject({ method: 'GET', url })).json();
      all.push(...page.tasks.map((t: any) => t.task_id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(all).to.have.length(7);
    expect(new Set(all).size).to.equal(7);
    const echo = (await f.app.inject({ method: 'GET', url: '/api/v1/tasks?task_type=echo' })).json();
    expect(echo.tasks).to.have.length(3);
    // list pages are summaries: payload and result only from GET /api/v1/tasks/{id}
    expect(echo.tasks[0]).to.include.keys('task_id', 'status', 'task_type', 'attempts');
    expect(echo.tasks[0]).to.not.have.any.keys('payload', 'result');
    const q1 = (await f.app.inject({ method: 'GET', url: '/api/v1/tasks?queue=q1&status=PENDING' })).json();
    expect(q1.tasks).to.have.length(3);
  });

  it('cancel: waiting → 200 CANCELLED; again → 409 with the state; RUNNING → 202 and the worker is told', async () => {
    const { task_id } = (await submit({ task_type: 'noop', scheduled_at: '2026-06-02T00:00:00Z' })).json();
    const first = await f.app.inject({ method: 'POST', url: `/api/v1/tasks/${task_id}/cancel` });
    expect(first.statusCode).to.equal(200);
    expect(first.json()).to.include({ task_id, status: 'CANCELLED' });
    const second = await f.app.inject({ method: 'POST', url: `/api/v1/tasks/${task_id}/cancel` });
    expect(second.statusCode).to.equal(409);
    expect(second.json().error).to.include({ code: 'TASK_STATE_CONFLICT' });
    expect(second.json().error.details.state).to.equal('CANCELLED');

    const running = (await submit({ task_type: 'sleep', payload: { ms: 1000 } })).json().task_id;
    await f.store.claimTasks([running], 'worker-1', f.clock.now(), 60_000);
    const res = await f.app.inject({
      method: 'POST',
      url: `/api/v1/tasks/${running}/cancel`,
      headers: { 'content-type': 'application/json' },
      payload: '',
    });
    expect(res.statusCode).to.equal(202);
    expect(res.json()).to.include({ task_id: running, status: 'RUNNING', cancel_requested: true });
    expect(f.aborted).to.deep.equal([{ taskId: running, attempt: 1 }]);
  });

  it('/healthz, /readyz and /metrics answer', async () => {
    expect((await f.app.inject({ method: 'GET', url: '/healthz' })).json()).to.deep.equal({ status: 'ok' });
    expect((await f.app.inject({ method: 'GET', url: '/readyz' })).statusCode).to.equal(200);
    await submit({ task_type: 'noop' });
    const text = (await f.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(text).to.contain('scheduler_tasks_submitted_total{task_type="noop"} 1');
    expect(text).to.contain('scheduler_tasks{state="PENDING"} 1');
    for (const name of ['scheduler_tasks_completed_total', 'scheduler_dispatch_lag_seconds', 'scheduler_task_duration_seconds']) {
      expect(text).to.contain(`# TYPE ${name}`);
    }
  });

  it('after shutdown starts, submissions get 503 with Retry-After and /readyz says not ready', async () => {
    f.service.stopAccepting();
    const res = await submit({ task_type: 'noop' });
    expect(res.statusCode).to.equal(503);
    expect(res.headers['retry-after']).to.equal('1');
    expect(res.json().error.code).to.equal('SERVICE_UNAVAILABLE');
    expect((await f.app.inject({ method: 'GET', url: '/readyz' })).statusCode).to.equal(503);
  });
});
