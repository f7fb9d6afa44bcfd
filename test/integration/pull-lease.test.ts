import { expect } from 'chai';
import { ManualClock } from '../../src/domain/clock';
import { useInProcessScheduler } from '../helpers/in-process-scheduler';

/** Yields to the event loop until `check` holds (bounded): waits for an event, not for time. */
async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/**
 * HTTP pull workers on the real scheduler (embedded store, actors, no Redis) whose clock is a
 * ManualClock the test moves: lease timeouts and lease expiry happen only when it does. Requests
 * go through `app.inject`; a lease request is a long poll, so it is started, then the test acts,
 * then it awaits the answer. Times are read on the scheduler's clock (`s.now()`): on PostgreSQL
 * (TEST_SERVICE_STORE=postgres) it is the manual clock plus the measured offset to the database's.
 */
describe('HTTP pull workers: POST /api/v1/queues/{queue}/lease (real scheduler, manual clock)', function () {
  this.timeout(60_000);
  const clock = new ManualClock(Date.now());
  const LEASE_MS = 4000;
  const s = useInProcessScheduler(
    {
      workers: 1,
      workerConcurrency: 2,
      partitions: 4,
      externalQueues: {
        jobs: { transport: 'http', leaseMs: LEASE_MS, maxInFlight: 50 },
        capped: { transport: 'http', leaseMs: LEASE_MS, maxInFlight: 2 },
        fair: { transport: 'http', leaseMs: LEASE_MS },
      },
    },
    () => ({}),
    { clock },
  );

  const post = (url: string, body: unknown) =>
    s.scheduler.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body) });
  const lease = (queue: string, body: Record<string, unknown>) => post(`/api/v1/queues/${queue}/lease`, { worker_id: 'w1', ...body });

  async function submit(queue: string, extra: Record<string, unknown> = {}): Promise<string> {
    const res = await post('/api/v1/tasks', {
      task_type: 'resize',
      queue,
      payload: { n: 1 },
      max_retries: 3,
      retry_delay_seconds: 0,
      ...extra,
    });
    expect(res.statusCode, res.body).to.equal(202);
    return res.json().task_id as string;
  }
  const queueStats = async (queue: string) =>
    (await s.scheduler.runtime.router.dispatcher!.ask('stats', null)).external.find((q) => q.queue === queue) as {
      ready: number;
      inFlight: number;
      waiting: number;
    };
  const waitingLeases = async (queue = 'jobs') => (await queueStats(queue)).waiting;
  /** Waits until `n` tasks of `queue` are in the dispatcher's ready queues (handed over by their owners). */
  const readyIn = (queue: string, n: number) => until(`${n} ready in ${queue}`, async () => (await queueStats(queue)).ready === n);
  const statusOf = async (id: string) => (await s.scheduler.service.get(id)).status as string;

  it('hands out a due task RUNNING with its attempt, lease, worker id and the documented fields', async () => {
    const id = await submit('jobs', { idempotency_key: 'k-1', timeout_seconds: 12 });
    const res = await lease('jobs', { wait_s: 5 });
    expect(res.statusCode, res.body).to.equal(200);
    const tasks = res.json().tasks;
    expect(tasks).to.have.length(1);
    expect(Object.keys(tasks[0]).sort()).to.deep.equal(
      [
        'task_id',
        'task_type',
        'queue',
        'tenant_id',
        'payload',
        'attempt',
        'lease_expires_at',
        'timeout_ms',
        'idempotency_key',
        'checkpoint',
        'traceparent',
      ].sort(),
    );
    expect(tasks[0]).to.deep.include({
      task_id: id,
      task_type: 'resize',
      queue: 'jobs',
      tenant_id: 'default',
      payload: { n: 1 },
      attempt: 1,
      timeout_ms: 12_000,
      idempotency_key: 'k-1',
      checkpoint: null,
      traceparent: null,
    });
    expect(Date.parse(tasks[0].lease_expires_at)).to.equal(s.now() + LEASE_MS);
    const t = await s.scheduler.service.get(id);
    expect(t).to.deep.include({ status: 'RUNNING', attempts: 1, worker_id: 'http:w1' });

    const done = await post(`/api/v1/tasks/${id}/complete`, { attempt: 1, result: { ok: true } });
    expect(done.statusCode, done.body).to.equal(200);
    expect(done.json()).to.deep.equal({ task_id: id, attempt: 1, status: 'SUCCEEDED' });
    expect(await s.scheduler.service.get(id)).to.deep.include({ status: 'SUCCEEDED', result: { ok: true } });
  });

  it('a waiting request is answered when a task of its queue is submitted (long poll), not before', async () => {
    const pending = lease('jobs', { wait_s: 30 });
    await until('the request waits', async () => (await waitingLeases()) === 1);
    const id = await submit('jobs');
    const res = await pending;
    expect(res.json().tasks.map((t: { task_id: string }) => t.task_id)).to.deep.equal([id]);
    expect(await waitingLeases()).to.equal(0);
    await post(`/api/v1/tasks/${id}/complete`, { attempt: 1, result: null });
  });

  it('answers {tasks: []} at wait_s (the clock passing it), and at once for wait_s 0', async () => {
    const pending = lease('jobs', { wait_s: 3 });
    await until('the request waits', async () => (await waitingLeases()) === 1);
    clock.advance(2999);
    expect(await waitingLeases()).to.equal(1);
    clock.advance(1);
    const res = await pending;
    expect(res.statusCode).to.equal(200);
    expect(res.json()).to.deep.equal({ tasks: [] });
    const now = await lease('jobs', {});
    expect(now.json()).to.deep.equal({ tasks: [] });
    expect(await waitingLeases()).to.equal(0);
  });

  it('max bounds one answer; maxInFlight bounds what is out at once', async () => {
    for (let i = 0; i < 5; i++) await submit('jobs');
    await readyIn('jobs', 5);
    const first = (await lease('jobs', { max: 3 })).json().tasks;
    expect(first).to.have.length(3);
    const second = (await lease('jobs', { max: 10 })).json().tasks;
    expect(second).to.have.length(2);
    for (const t of [...first, ...second]) await post(`/api/v1/tasks/${t.task_id}/complete`, { attempt: t.attempt, result: null });

    for (let i = 0; i < 3; i++) await submit('capped');
    await readyIn('capped', 3);
    const out = (await lease('capped', { max: 3 })).json().tasks;
    expect(out).to.have.length(2);
    expect((await lease('capped', { max: 3 })).json().tasks).to.have.length(0);
    // A completion frees a place: a waiting request gets the third task.
    const pending = lease('capped', { max: 3, wait_s: 30 });
    await until('the request waits', async () => (await waitingLeases('capped')) === 1);
    await post(`/api/v1/tasks/${out[0].task_id}/complete`, { attempt: 1, result: null });
    const third = (await pending).json().tasks;
    expect(third).to.have.length(1);
    for (const t of [out[1], third[0]]) await post(`/api/v1/tasks/${t.task_id}/complete`, { attempt: t.attempt, result: null });
  });

  it('refuses a queue that is not a pull queue (404 NOT_PULL_QUEUE) and bad bodies (400 with the field)', async () => {
    const res = await lease('nope', {});
    expect(res.statusCode).to.equal(404);
    expect(res.json().error).to.deep.include({ code: 'NOT_PULL_QUEUE' });
    expect(res.json().error.details).to.deep.equal({ queue: 'nope', transport: null });
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ worker_id: '' }, 'worker_id'],
      [{ worker_id: 'x'.repeat(201) }, 'worker_id'],
      [{ max: 0 }, 'max'],
      [{ max: 101 }, 'max'],
      [{ max: 1.5 }, 'max'],
      [{ wait_s: 31 }, 'wait_s'],
      [{ wait_s: -1 }, 'wait_s'],
      [{ extra: 1 }, 'extra'],
    ];
    for (const [body, field] of bad) {
      const r = await lease('jobs', body);
      expect(r.statusCode, JSON.stringify(body)).to.equal(400);
      expect(r.json().error.details.field, JSON.stringify(body)).to.equal(field);
    }
    const none = await post('/api/v1/queues/jobs/lease', {});
    expect(none.json().error.details.field).to.equal('worker_id');
  });

  it('heartbeat extends the lease; logs are kept with the attempt; checkpoint and progress are fenced too', async () => {
    const id = await submit('jobs');
    const [t] = (await lease('jobs', { wait_s: 5 })).json().tasks;
    clock.advance(1000);
    const hb = await post(`/api/v1/tasks/${id}/heartbeat`, { attempt: 1 });
    expect(hb.statusCode, hb.body).to.equal(200);
    expect(hb.json()).to.deep.equal({ task_id: id, attempt: 1, lease_expires_at: new Date(s.now() + LEASE_MS).toISOString() });
    expect(Date.parse(hb.json().lease_expires_at)).to.be.greaterThan(Date.parse(t.lease_expires_at));

    const at = new Date(s.now() - 500).toISOString();
    const logs = await post(`/api/v1/tasks/${id}/logs`, {
      attempt: 1,
      lines: [
        { level: 'info', msg: 'started', at },
        { level: 'warn', msg: 'slow', fields: { ms: 900 } },
      ],
    });
    expect(logs.statusCode, logs.body).to.equal(200);
    expect(logs.json()).to.deep.equal({ task_id: id, attempt: 1, appended: 2 });
    // The line's level is the one kept as fields.level: a `level` of its own fields does not replace it.
    const more = await post(`/api/v1/tasks/${id}/logs`, {
      attempt: 1,
      lines: [{ level: 'error', msg: 'third', fields: { level: 'debug' } }],
    });
    expect(more.json().appended).to.equal(1);
    const read = await s.scheduler.app.inject({ method: 'GET', url: `/api/v1/tasks/${id}/attempts/1/logs` });
    expect(read.json().lines).to.deep.equal([
      { n: 1, at, message: 'started', fields: { level: 'info' }, truncated: false },
      { n: 2, at: new Date(s.now()).toISOString(), message: 'slow', fields: { level: 'warn', ms: 900 }, truncated: false },
      { n: 3, at: new Date(s.now()).toISOString(), message: 'third', fields: { level: 'error' }, truncated: false },
    ]);
    const badLogs: Array<[unknown, string]> = [
      [{ attempt: 1, lines: [] }, 'lines'],
      [{ attempt: 1, lines: [{ level: 'fatal', msg: 'x' }] }, 'lines[0].level'],
      [{ attempt: 1, lines: [{ level: 'info' }] }, 'lines[0].msg'],
      [{ attempt: 1, lines: [{ level: 'info', msg: 'x', at: 'yesterday' }] }, 'lines[0].at'],
      [{ attempt: 1, lines: [{ level: 'info', msg: 'x', at: '2026-02-30T00:00:00Z' }] }, 'lines[0].at'],
      [{ attempt: 1, lines: Array(201).fill({ level: 'info', msg: 'x' }) }, 'lines'],
    ];
    for (const [body, field] of badLogs) {
      const r = await post(`/api/v1/tasks/${id}/logs`, body);
      expect(r.statusCode, field).to.equal(400);
      expect(r.json().error.details.field).to.equal(field);
    }
    const stale = await post(`/api/v1/tasks/${id}/logs`, { attempt: 2, lines: [{ level: 'info', msg: 'x' }] });
    expect(stale.statusCode).to.equal(409);
    expect(stale.json().error.code).to.equal('ATTEMPT_CONFLICT');

    expect((await post(`/api/v1/tasks/${id}/progress`, { attempt: 1, progress: { done: 1, total: 2 } })).statusCode).to.equal(200);
    expect((await post(`/api/v1/tasks/${id}/checkpoint`, { attempt: 1, value: { cursor: 7 } })).statusCode).to.equal(200);
    const fail = await post(`/api/v1/tasks/${id}/complete`, { attempt: 1, error: { message: 'boom', type: 'Boom' } });
    expect(fail.json().status).to.be.oneOf(['RETRYING', 'PENDING']); // retry_delay_seconds 0: due at once
    // The retry is a new attempt, handed out with the checkpoint to resume from.
    const [again] = (await lease('jobs', { wait_s: 5 })).json().tasks;
    expect(again).to.deep.include({ task_id: id, attempt: 2, checkpoint: { cursor: 7 } });
    await post(`/api/v1/tasks/${id}/complete`, { attempt: 2, result: null });
  });

  it('an expired lease runs the task again as attempt 2; the stale attempt 1 is refused with 409', async () => {
    const id = await submit('jobs');
    const [t] = (await lease('jobs', { wait_s: 5 })).json().tasks;
    expect(t.attempt).to.equal(1);
    clock.advance(LEASE_MS);
    // The sweep runs every half lease on the clock (re-armed after each pass): moved on until it has.
    await until('the lease sweep retried it', async () => {
      clock.advance(LEASE_MS / 2);
      return (await statusOf(id)) !== 'RUNNING';
    });
    const [again] = (await lease('jobs', { wait_s: 5 })).json().tasks;
    expect(again).to.deep.include({ task_id: id, attempt: 2 });
    const got = await s.scheduler.service.get(id, { attempts: true });
    expect(got.attempt_history?.[0].error?.type).to.equal('worker_lost');

    for (const [path, body] of [
      ['complete', { attempt: 1, result: 'late' }],
      ['heartbeat', { attempt: 1 }],
    ] as const) {
      const r = await post(`/api/v1/tasks/${id}/${path}`, body);
      expect(r.statusCode, path).to.equal(409);
      expect(r.json().error).to.deep.include({ code: 'ATTEMPT_CONFLICT' });
      expect(r.json().error.details).to.deep.include({ attempt: 1, current_attempt: 2, state: 'RUNNING' });
    }
    expect((await post(`/api/v1/tasks/${id}/complete`, { attempt: 2, result: 'ok' })).json().status).to.equal('SUCCEEDED');
  });

  it('a result over maxResultBytes (1 MiB, the body limit too) ends the attempt result_too_large, not a 413 that left it running', async () => {
    const id = await submit('jobs');
    const [t] = (await lease('jobs', { wait_s: 5 })).json().tasks;
    expect(t.task_id).to.equal(id);
    const big = await post(`/api/v1/tasks/${id}/complete`, { attempt: 1, result: { s: 'x'.repeat(1_100_000) } });
    expect(big.statusCode, big.body.slice(0, 300)).to.equal(200);
    expect(big.json().status).to.equal('FAILED');
    const got = await s.scheduler.service.get(id, { attempts: true });
    expect(got.attempt_history?.[0].error?.type).to.equal('result_too_large');
    // Past the complete route's own limit (2 × maxResultBytes + 64 KiB) a body is still 413.
    const id2 = await submit('jobs', { max_retries: 0 });
    expect((await lease('jobs', { wait_s: 5 })).json().tasks[0].task_id).to.equal(id2);
    const huge = await post(`/api/v1/tasks/${id2}/complete`, { attempt: 1, result: 'x'.repeat(2 * 1_048_576 + 70_000) });
    expect(huge.statusCode).to.equal(413);
    expect(await statusOf(id2)).to.equal('RUNNING');
    const failed = await post(`/api/v1/tasks/${id2}/complete`, { attempt: 1, error: { message: 'too big to report' } });
    expect(failed.json().status).to.equal('DEAD'); // retries exhausted: the dead-letter queue
  });

  it('cancel of a running pull task ends its attempt: the next heartbeat is 409 ATTEMPT_CONFLICT', async () => {
    const id = await submit('jobs');
    await lease('jobs', { wait_s: 5 });
    const cancel = await post(`/api/v1/tasks/${id}/cancel`, undefined);
    expect(cancel.statusCode, cancel.body).to.equal(202);
    const hb = await post(`/api/v1/tasks/${id}/heartbeat`, { attempt: 1 });
    expect(hb.statusCode).to.equal(409);
    expect(hb.json().error.code).to.equal('ATTEMPT_CONFLICT');
    await s.waitFor(id, (x) => x.status === 'CANCELLED');
  });

  it('tenant fairness holds for pull queues: a small tenant is not starved behind a big one', async () => {
    for (let i = 0; i < 12; i++) await submit('fair', { metadata: { tenant_id: 'big' } });
    for (let i = 0; i < 2; i++) await submit('fair', { metadata: { tenant_id: 'small' } });
    await readyIn('fair', 14);
    const first = (await lease('fair', { max: 4 })).json().tasks;
    expect(first.filter((t: { tenant_id: string }) => t.tenant_id === 'small')).to.have.length(2);
    const rest = (await lease('fair', { max: 100 })).json().tasks;
    expect(rest).to.have.length(10);
    for (const t of [...first, ...rest]) await post(`/api/v1/tasks/${t.task_id}/complete`, { attempt: t.attempt, result: null });
  });

  it('a client that goes away is dropped: nothing is claimed for it', async () => {
    // Not through inject: a real connection that is closed while the request waits.
    const url = await s.scheduler.app.listen({ port: 0, host: '127.0.0.1' });
    const ac = new AbortController();
    const req = fetch(`${url}/api/v1/queues/jobs/lease`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ worker_id: 'gone', wait_s: 30 }),
      signal: ac.signal,
    }).catch((err: Error) => err);
    await until('the request waits', async () => (await waitingLeases()) === 1);
    ac.abort();
    expect(await req).to.be.instanceOf(Error);
    await until('its waiter is dropped', async () => (await waitingLeases()) === 0);
    const id = await submit('jobs');
    await readyIn('jobs', 1);
    const [t] = (await lease('jobs', { worker_id: 'w2' })).json().tasks;
    expect(t).to.deep.include({ task_id: id, attempt: 1 });
    expect((await s.scheduler.service.get(id)).worker_id).to.equal('http:w2');
    await post(`/api/v1/tasks/${id}/complete`, { attempt: 1, result: null });
  });

  it("a completion after a cancel recorded in the store but not yet told to this node (a cluster's late message) is 409, the task CANCELLED", async () => {
    const id = await submit('jobs');
    const res = await lease('jobs', { wait_s: 5 });
    expect(res.json().tasks.map((t: { task_id: string }) => t.task_id)).to.deep.equal([id]);
    // What a cancel through another member leaves here until its message arrives: the flag in the store.
    expect((await s.scheduler.store.cancelTask(id, s.now())).kind).to.equal('cancelling');
    const done = await post(`/api/v1/tasks/${id}/complete`, { attempt: 1, result: { ok: true } });
    expect(done.statusCode, done.body).to.equal(409);
    expect(done.json().error.code).to.equal('ATTEMPT_CONFLICT');
    expect(await statusOf(id)).to.equal('CANCELLED');
  });

  it('shutdown answers waiting requests with {tasks: []} (last: it closes the scheduler)', async () => {
    const pending = lease('jobs', { wait_s: 30 });
    await until('the request waits', async () => (await waitingLeases()) === 1);
    await s.scheduler.close();
    const res = await pending;
    expect(res.statusCode).to.equal(200);
    expect(res.json()).to.deep.equal({ tasks: [] });
  });
});
