import { expect } from 'chai';
import type { LightMyRequestResponse } from 'fastify';
import { apiFixture, ApiFixture } from '../helpers/api-fixture';

/**
 * `?wait=` long polls through app.inject, on a real SQLite store and a manual clock; no actors: a
 * test ends a task in the store as the dispatcher would and publishes its end (or leaves it to the
 * re-check). Nothing sleeps: the clock is moved, and the tests wait for the waiter count.
 */
describe('REST: ?wait= (long polls on tasks and workflows)', () => {
  let f: ApiFixture;
  beforeEach(async () => {
    f = await apiFixture({ waits: { maxWaiters: 3, recheckMs: 500 } });
  });
  afterEach(async () => f.close());

  const submit = async (body: object = { task_type: 'echo', payload: 1 }): Promise<string> =>
    (await f.app.inject({ method: 'POST', url: '/api/v1/tasks', payload: body })).json().task_id;

  /** Starts a GET and records when it is answered. */
  function start(url: string, signal?: AbortSignal) {
    const state: { res: LightMyRequestResponse | null; err: unknown } = { res: null, err: null };
    const done = f.app
      .inject({ method: 'GET', url, ...(signal ? { signal } : {}) })
      .then((r) => (state.res = r))
      .catch((err: unknown) => (state.err = err));
    return { state, done };
  }

  /** Lets the event loop run until `cond` holds (bounded by turns, not time). */
  async function until(cond: () => boolean, what: string): Promise<void> {
    for (let i = 0; i < 2000 && !cond(); i++) await new Promise((r) => setImmediate(r));
    expect(cond(), what).to.equal(true);
  }

  /** Claims the task and records its attempt's end in the store, as the dispatcher would (no event). */
  async function finishInStore(taskId: string, state: 'SUCCEEDED' | 'FAILED' = 'SUCCEEDED', result: unknown = { ok: true }) {
    const [c] = await f.store.claimTasks([taskId], 'worker-1', f.clock.now(), 60_000);
    const error = state === 'FAILED' ? { message: 'no', type: 'PermanentError', retryable: false } : null;
    await f.store.completeAttempts([{ taskId, attempt: c.attempt, state, retryAt: null, result, error, durationMs: 1 }], f.clock.now());
  }

  it('answers as soon as the task ends (its end event), with the same body as a plain GET', async () => {
    const id = await submit();
    const w = start(`/api/v1/tasks/${id}?wait=30&include=attempts`);
    await until(() => f.waiters.size === 1, 'the waiter is held');
    await finishInStore(id);
    // Held until the end is announced (the re-check has not run: the clock did not move).
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect(w.state.res).to.equal(null);
    f.taskEnds.publish({ taskIds: [id] });
    await w.done;
    expect(w.state.res?.statusCode).to.equal(200);
    const body = w.state.res?.json();
    expect(body).to.include({ task_id: id, status: 'SUCCEEDED' });
    expect(body.result).to.deep.equal({ ok: true });
    expect(body.attempt_history).to.have.length(1);
    const plain = await f.app.inject({ method: 'GET', url: `/api/v1/tasks/${id}?include=attempts` });
    expect(body).to.deep.equal(plain.json());
    expect(f.waiters.size).to.equal(0);
  });

  it('an end event for another task only re-reads; the waiter stays until its own end', async () => {
    const id = await submit();
    const other = await submit();
    const w = start(`/api/v1/tasks/${id}?wait=30`);
    await until(() => f.waiters.size === 1, 'held');
    f.taskEnds.publish({ taskIds: [other, id] }); // a spurious wake: the store still says PENDING
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect(w.state.res).to.equal(null);
    expect(f.waiters.size).to.equal(1);
    await finishInStore(id, 'FAILED');
    f.taskEnds.publish({ taskIds: [id] });
    await w.done;
    expect(w.state.res?.json()).to.include({ status: 'FAILED' });
  });

  it('answers on a cancel (the service announces it)', async () => {
    const id = await submit();
    const w = start(`/api/v1/tasks/${id}?wait=30`);
    await until(() => f.waiters.size === 1, 'held');
    expect((await f.app.inject({ method: 'POST', url: `/api/v1/tasks/${id}/cancel` })).statusCode).to.equal(200);
    await w.done;
    expect(w.state.res?.statusCode).to.equal(200);
    expect(w.state.res?.json()).to.include({ status: 'CANCELLED' });
  });

  it('answers at its timeout with the current state (200), not a moment before', async () => {
    const id = await submit();
    const w = start(`/api/v1/tasks/${id}?wait=2.5`);
    await until(() => f.waiters.size === 1, 'held');
    f.clock.advance(2499);
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect(w.state.res).to.equal(null);
    f.clock.advance(1);
    await w.done;
    expect(w.state.res?.statusCode).to.equal(200);
    expect(w.state.res?.json()).to.include({ task_id: id, status: 'PENDING' });
    expect(f.waiters.size).to.equal(0);
    expect(f.clock.pendingTimers(), 'no timer left behind').to.equal(0);
  });

  it('an end nobody announced (another node, a cascade) is found by the batched re-check', async () => {
    const id = await submit();
    const w = start(`/api/v1/tasks/${id}?wait=30`);
    await until(() => f.waiters.size === 1, 'held');
    await finishInStore(id);
    f.clock.advance(499);
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect(w.state.res).to.equal(null);
    f.clock.advance(1);
    await w.done;
    expect(w.state.res?.json()).to.include({ status: 'SUCCEEDED' });
  });

  it('a task already terminal answers at once', async () => {
    const id = await submit();
    await finishInStore(id);
    const res = await f.app.inject({ method: 'GET', url: `/api/v1/tasks/${id}?wait=60` });
    expect(res.statusCode).to.equal(200);
    expect(res.json()).to.include({ status: 'SUCCEEDED' });
    expect(f.waiters.size).to.equal(0);
  });

  it('refuses a wait outside (0, 60] seconds or not a number: 400 naming `wait`', async () => {
    const id = await submit();
    for (const bad of ['0', '0.0', '-1', '60.5', '61', '1e3', 'abc', '', '%20', '5s', '1,5', 'Infinity', 'NaN']) {
      const res = await f.app.inject({ method: 'GET', url: `/api/v1/tasks/${id}?wait=${bad}` });
      expect(res.statusCode, bad).to.equal(400);
      expect(res.json().error, bad).to.deep.include({ code: 'VALIDATION_FAILED' });
      expect(res.json().error.details.field, bad).to.equal('wait');
      expect(res.json().error.message, bad).to.equal('wait: must be a number of seconds, more than 0 and at most 60');
    }
    const wf = await f.app.inject({ method: 'GET', url: `/api/v1/workflows/whatever?wait=0` });
    expect(wf.statusCode).to.equal(400);
    expect(wf.json().error.details.field).to.equal('wait');
    // A wait for an unknown task is a 404 at once.
    const missing = await f.app.inject({ method: 'GET', url: `/api/v1/tasks/nope?wait=60` });
    expect(missing.statusCode).to.equal(404);
    // 60 and fractions are fine (answered at once: the task is terminal).
    await finishInStore(id);
    for (const good of ['60', '0.001', '1.5', '60.000']) {
      expect((await f.app.inject({ method: 'GET', url: `/api/v1/tasks/${id}?wait=${good}` })).statusCode, good).to.equal(200);
    }
  });

  it('a client that goes away frees its waiter at once (no timer, no later read)', async () => {
    const id = await submit();
    const ac = new AbortController();
    const w = start(`/api/v1/tasks/${id}?wait=60`, ac.signal);
    await until(() => f.waiters.size === 1, 'held');
    ac.abort();
    await w.done;
    expect(w.state.res).to.equal(null);
    await until(() => f.waiters.size === 0, 'freed');
    expect(f.clock.pendingTimers(), 'its timeout and the re-check are gone').to.equal(0);
  });

  it('at most waits.maxWaiters are held: one more is 429 TOO_MANY_WAITERS with Retry-After', async () => {
    const ids = [await submit(), await submit(), await submit(), await submit()];
    const held = ids.slice(0, 3).map((id) => start(`/api/v1/tasks/${id}?wait=10`));
    await until(() => f.waiters.size === 3, 'three held');
    const res = await f.app.inject({ method: 'GET', url: `/api/v1/tasks/${ids[3]}?wait=10` });
    expect(res.statusCode).to.equal(429);
    expect(res.json().error).to.deep.include({ code: 'TOO_MANY_WAITERS' });
    expect(res.headers['retry-after']).to.equal('1');
    // A plain read is still served.
    expect((await f.app.inject({ method: 'GET', url: `/api/v1/tasks/${ids[3]}` })).statusCode).to.equal(200);
    f.clock.advance(10_000);
    await Promise.all(held.map((h) => h.done));
    expect(held.map((h) => h.state.res?.statusCode)).to.deep.equal([200, 200, 200]);
  });

  it('closing the app answers every waiter with its current state at once', async () => {
    const id = await submit();
    const w = start(`/api/v1/tasks/${id}?wait=60`);
    const wf = (
      await f.app.inject({ method: 'POST', url: '/api/v1/workflows', payload: { tasks: [{ task_id: 'a', task_type: 'echo' }] } })
    ).json();
    const ww = start(`/api/v1/workflows/${wf.workflow_id}?wait=60`);
    await until(() => f.waiters.size === 2, 'held');
    await f.app.close();
    await Promise.all([w.done, ww.done]);
    expect(w.state.res?.statusCode).to.equal(200);
    expect(w.state.res?.json()).to.include({ status: 'PENDING' });
    expect(ww.state.res?.json()).to.include({ status: 'RUNNING' });
    // After the close a wait is not held: it answers with its first read.
    expect(f.waiters.size).to.equal(0);
  });

  describe('workflows', () => {
    const twoStep = {
      tasks: [
        { task_id: 'a', task_type: 'echo' },
        { task_id: 'b', task_type: 'echo', dependencies: ['a'] },
      ],
    };

    it('answers when its last task ends (that task end wakes it), not at an earlier one', async () => {
      const wf = (await f.app.inject({ method: 'POST', url: '/api/v1/workflows', payload: twoStep })).json();
      const w = start(`/api/v1/workflows/${wf.workflow_id}?wait=30`);
      await until(() => f.waiters.size === 1, 'held');
      await finishInStore(wf.task_ids.a);
      f.taskEnds.publish({ taskIds: [wf.task_ids.a] });
      for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
      expect(w.state.res, 'still RUNNING after a').to.equal(null);
      await finishInStore(wf.task_ids.b);
      f.taskEnds.publish({ taskIds: [wf.task_ids.b] });
      await w.done;
      expect(w.state.res?.statusCode).to.equal(200);
      const body = w.state.res?.json();
      expect(body).to.include({ workflow_id: wf.workflow_id, status: 'SUCCEEDED', open_tasks: 0 });
      expect(body).to.deep.equal((await f.app.inject({ method: 'GET', url: `/api/v1/workflows/${wf.workflow_id}` })).json());
    });

    it('answers on a workflow cancel, and so do the waiters of its tasks', async () => {
      const wf = (await f.app.inject({ method: 'POST', url: '/api/v1/workflows', payload: twoStep })).json();
      const w = start(`/api/v1/workflows/${wf.workflow_id}?wait=30`);
      const wb = start(`/api/v1/tasks/${wf.task_ids.b}?wait=30`);
      await until(() => f.waiters.size === 2, 'held');
      expect((await f.app.inject({ method: 'POST', url: `/api/v1/workflows/${wf.workflow_id}/cancel` })).statusCode).to.equal(200);
      await Promise.all([w.done, wb.done]);
      expect(w.state.res?.json()).to.include({ status: 'CANCELLED' });
      expect(wb.state.res?.json()).to.include({ status: 'CANCELLED' });
    });

    it('answers at its timeout with the current state; an unknown one is 404', async () => {
      const wf = (await f.app.inject({ method: 'POST', url: '/api/v1/workflows', payload: twoStep })).json();
      const w = start(`/api/v1/workflows/${wf.workflow_id}?wait=1`);
      await until(() => f.waiters.size === 1, 'held');
      f.clock.advance(1000);
      await w.done;
      expect(w.state.res?.json()).to.include({ status: 'RUNNING' });
      expect((await f.app.inject({ method: 'GET', url: '/api/v1/workflows/nope?wait=1' })).statusCode).to.equal(404);
      expect((await f.app.inject({ method: 'GET', url: `/api/v1/workflows/${wf.workflow_id}?limit=1` })).statusCode).to.equal(400);
    });
  });
});
