import { expect } from 'chai';
import { apiFixture, ApiFixture } from '../helpers/api-fixture';

/** Workflow routes through app.inject, on a real SQLite store with a manual clock; no actors. */
describe('REST: workflows', () => {
  let f: ApiFixture;
  beforeEach(async () => {
    f = await apiFixture({ workflowMaxTasks: 10_000 });
  });
  afterEach(async () => f.close());

  const post = (body: unknown) => f.app.inject({ method: 'POST', url: '/api/v1/workflows', payload: body as object });
  const get = (url: string) => f.app.inject({ method: 'GET', url }).then((r) => ({ status: r.statusCode, body: r.json() }));

  /** Claims a task and records how its attempt ended, as the dispatcher would. */
  async function finish(taskId: string, state: 'SUCCEEDED' | 'FAILED' | 'CANCELLED', result: unknown = null) {
    const [c] = await f.store.claimTasks([taskId], 'worker-1', f.clock.now(), 60_000);
    expect(c, `claim of ${taskId}`).to.not.equal(undefined);
    const error = state === 'FAILED' ? { message: 'no', type: 'PermanentError', retryable: false } : null;
    await f.store.completeAttempts([{ taskId, attempt: c.attempt, state, retryAt: null, result, error, durationMs: 1 }], f.clock.now());
  }

  /** Nothing at all was stored: no workflow, no task, no due entry handed out. */
  async function expectNothingStored() {
    expect((await get('/api/v1/workflows')).body.workflows).to.deep.equal([]);
    expect((await get('/api/v1/tasks')).body.tasks).to.deep.equal([]);
    expect(f.stored).to.deep.equal([]);
  }

  const diamond = () => ({
    workflow_name: 'diamond',
    tasks: [
      { task_id: 'a', task_type: 'echo', payload: 1 },
      { task_id: 'b', task_type: 'echo', dependencies: ['a'] },
      { task_id: 'c', task_type: 'echo', dependencies: ['a'], priority: 'high' },
      { task_id: 'd', task_type: 'echo', dependencies: ['b', 'c', 'b'] },
    ],
    metadata: { tenant_id: 'acme' },
  });

  it('202: roots PENDING, the rest BLOCKED; only roots are handed to partition owners; GET shows the graph', async () => {
    const res = await post(diamond());
    expect(res.statusCode).to.equal(202);
    const ack = res.json();
    expect(ack).to.include({ workflow_name: 'diamond', status: 'RUNNING' });
    expect(Object.entries(ack.tasks)).to.deep.equal([
      ['a', 'PENDING'],
      ['b', 'BLOCKED'],
      ['c', 'BLOCKED'],
      ['d', 'BLOCKED'],
    ]);
    const ids = ack.task_ids;
    expect(Object.keys(ids)).to.deep.equal(['a', 'b', 'c', 'd']);
    expect(new Set(Object.values(ids)).size).to.equal(4);
    expect(f.stored.map((e) => e.id)).to.deep.equal([ids.a]);

    const wf = await get(`/api/v1/workflows/${ack.workflow_id}`);
    expect(wf.status).to.equal(200);
    expect(wf.body).to.include({ workflow_id: ack.workflow_id, status: 'RUNNING', task_count: 4, open_tasks: 4, completed_at: null });
    expect(wf.body.metadata.tenant_id).to.equal('acme');
    expect(wf.body).to.include({ workflow_name: 'diamond' });
    expect(wf.body.tasks).to.deep.equal(ack.tasks);
    expect(wf.body.task_ids).to.deep.equal(ids);
    expect(wf.body.task_counts).to.include({ PENDING: 1, BLOCKED: 3 });
    expect(wf.body.task_details.map((t: any) => t.workflow_task_id)).to.deep.equal(['a', 'b', 'c', 'd']);
    const d = wf.body.task_details.find((t: any) => t.workflow_task_id === 'd');
    expect(d).to.include({ task_id: ids.d, status: 'BLOCKED', unmet_dependencies: 2 });
    expect(d.dependencies).to.have.members(['b', 'c']);

    const task = await get(`/api/v1/tasks/${ids.c}`);
    expect(task.body).to.include({ workflow_id: ack.workflow_id, workflow_task_id: 'c', status: 'BLOCKED', priority: 'high' });
    expect(task.body.metadata.tenant_id).to.equal('acme'); // inherited from the workflow
  });

  it('one spelling: the former `name` and per-task `id` are refused as unknown fields, nothing stored', async () => {
    const named = await post({ name: 'x', tasks: [{ task_id: 'a', task_type: 'noop' }] });
    expect(named.statusCode).to.equal(400);
    expect(named.json().error).to.deep.include({ code: 'VALIDATION_FAILED' });
    expect(named.json().error.details.field).to.equal('name');
    const withId = await post({ tasks: [{ id: 'a', task_type: 'noop' }] });
    expect(withId.statusCode).to.equal(400);
    expect(withId.json().error.details.field).to.match(/^tasks\[0\]\.(id|task_id)$/);
    await expectNothingStored();
  });

  it('any local id is a plain key of the maps (`__proto__`, digits)', async () => {
    const ack = (
      await post({
        tasks: [
          { task_id: '__proto__', task_type: 'noop' },
          { task_id: '10', task_type: 'noop', dependencies: ['__proto__'] },
          { task_id: '2', task_type: 'noop' },
        ],
      })
    ).json();
    expect(Object.keys(ack.tasks).sort()).to.deep.equal(['10', '2', '__proto__']);
    expect(Object.getPrototypeOf(ack.tasks)).to.equal(Object.prototype);
    expect(ack.tasks).to.deep.equal(JSON.parse('{"__proto__": "PENDING", "10": "BLOCKED", "2": "PENDING"}'));
    const wf = (await get(`/api/v1/workflows/${ack.workflow_id}`)).body;
    expect(wf.task_ids).to.deep.equal(ack.task_ids);
    expect(wf.task_details.map((t: any) => t.workflow_task_id)).to.deep.equal(['__proto__', '10', '2']);
  });

  it('roots reach their partition owners with their stored seq, increasing in submission order', async () => {
    // Blocked tasks between the roots: a root's seq is its own, not the one at its place among roots.
    const tasks = Array.from({ length: 40 }, (_, i) => ({
      task_id: `r${i}`,
      task_type: 'noop',
      scheduled_at: '2026-06-01T14:30:00Z',
    })).flatMap((r, i) => (i % 10 === 1 ? [{ task_id: `join${i}`, task_type: 'noop', dependencies: ['r0', `r${i - 1}`] }, r] : [r]));
    const res = await post({ workflow_name: 'wide', tasks });
    expect(res.statusCode).to.equal(202);
    const ids = Object.entries(res.json().task_ids as Record<string, string>)
      .filter(([local]) => !local.startsWith('join'))
      .map(([, id]) => id);
    expect(f.stored.map((e) => e.id)).to.deep.equal(ids);
    const seqs = f.stored.map((e) => e.seq);
    expect(
      seqs.every((s, i) => s > (i === 0 ? 0 : seqs[i - 1])),
      'positive and increasing',
    ).to.equal(true);
    expect(seqs).to.deep.equal(await Promise.all(ids.map(async (id) => (await f.store.getTask(id))!.seq)));
  });

  it('a root with a later scheduled_at is SCHEDULED; a released task with a later scheduled_at too', async () => {
    const later = new Date(f.clock.now() + 60_000).toISOString();
    const ack = (
      await post({
        tasks: [
          { task_id: 'r', task_type: 'noop', scheduled_at: later },
          { task_id: 'now', task_type: 'noop' },
          { task_id: 's', task_type: 'noop', dependencies: ['now'], scheduled_at: later },
        ],
      })
    ).json();
    expect(ack.tasks).to.deep.equal({ r: 'SCHEDULED', now: 'PENDING', s: 'BLOCKED' });
    await finish(ack.task_ids.now, 'SUCCEEDED');
    const s = (await get(`/api/v1/tasks/${ack.task_ids.s}`)).body;
    expect(s).to.include({ status: 'SCHEDULED', due_at: later.replace('Z', '').slice(0, 19) + '.000Z' });
  });

  it('C5 at the store level: a failed branch cancels the join and below (upstream_failed); the workflow ends FAILED', async () => {
    const ack = (
      await post({
        tasks: [
          { task_id: 'A', task_type: 'echo' },
          { task_id: 'B', task_type: 'fail', dependencies: ['A'] },
          { task_id: 'C', task_type: 'echo', dependencies: ['A'] },
          { task_id: 'D', task_type: 'echo', dependencies: ['B', 'C'] },
          { task_id: 'E', task_type: 'echo', dependencies: ['D'] },
        ],
      })
    ).json();
    const id = (k: string) => ack.task_ids[k];
    await finish(id('A'), 'SUCCEEDED', 'a');
    await finish(id('B'), 'FAILED');
    for (const k of ['D', 'E']) {
      const t = (await get(`/api/v1/tasks/${id(k)}`)).body;
      expect(t.status, k).to.equal('CANCELLED');
      expect(t.error).to.include({ type: 'upstream_failed' });
      expect(t.error.message).to.include('"B"');
    }
    expect((await get(`/api/v1/workflows/${ack.workflow_id}`)).body.status).to.equal('RUNNING'); // C still runs
    await finish(id('C'), 'SUCCEEDED', 'c');
    const wf = (await get(`/api/v1/workflows/${ack.workflow_id}`)).body;
    expect(wf).to.include({ status: 'FAILED', open_tasks: 0 });
    expect(wf.completed_at).to.equal(new Date(f.clock.now()).toISOString());
    expect(wf.task_counts).to.include({ SUCCEEDED: 2, FAILED: 1, CANCELLED: 2, PENDING: 0, BLOCKED: 0 });
  });

  describe('validation: 400 naming the culprits, nothing stored (C6)', () => {
    const cases: Array<[string, unknown, number, string, Record<string, unknown>]> = [
      [
        'duplicate ids',
        {
          tasks: [
            { task_id: 'a', task_type: 'noop' },
            { task_id: 'a', task_type: 'noop' },
          ],
        },
        400,
        'INVALID_WORKFLOW',
        { problem: 'duplicate_ids', duplicate_ids: ['a'] },
      ],
      [
        'unknown dependency',
        { tasks: [{ task_id: 'a', task_type: 'noop', dependencies: ['ghost'] }] },
        400,
        'INVALID_WORKFLOW',
        { problem: 'unknown_dependencies', task_id: 'a', unknown_dependencies: ['ghost'], field: 'tasks[0].dependencies' },
      ],
      [
        'X↔Y cycle',
        {
          tasks: [
            { task_id: 'X', task_type: 'noop', dependencies: ['Y'] },
            { task_id: 'Y', task_type: 'noop', dependencies: ['X'] },
          ],
        },
        400,
        'INVALID_WORKFLOW',
        { problem: 'cycle', cycle: ['X', 'Y'] },
      ],
      [
        'Z depends on Z',
        { tasks: [{ task_id: 'Z', task_type: 'noop', dependencies: ['Z'] }] },
        400,
        'INVALID_WORKFLOW',
        { problem: 'self_dependency', task_ids: ['Z'] },
      ],
      ['empty workflow', { tasks: [] }, 400, 'INVALID_WORKFLOW', { problem: 'empty', field: 'tasks' }],
      [
        'bad field',
        {
          tasks: [
            { task_id: 'a', task_type: 'noop' },
            { task_id: 'b', task_type: 'noop', priority: 'urgent' },
          ],
        },
        400,
        'VALIDATION_FAILED',
        { field: 'tasks[1].priority' },
      ],
      ['missing task_id', { tasks: [{ task_type: 'noop' }] }, 400, 'VALIDATION_FAILED', { field: 'tasks[0].task_id' }],
      [
        'idempotency key on a workflow task',
        { tasks: [{ task_id: 'a', task_type: 'noop', idempotency_key: 'k' }] },
        400,
        'VALIDATION_FAILED',
        { field: 'tasks[0].idempotency_key' },
      ],
      [
        'unknown task type',
        {
          tasks: [
            { task_id: 'a', task_type: 'noop' },
            { task_id: 'b', task_type: 'nope' },
          ],
        },
        400,
        'UNKNOWN_TASK_TYPE',
        { field: 'tasks[1].task_type' },
      ],
      [
        'bad date',
        { tasks: [{ task_id: 'a', task_type: 'noop', scheduled_at: '2026-02-30T10:00:00Z' }] },
        400,
        'VALIDATION_FAILED',
        { field: 'tasks[0].scheduled_at' },
      ],
      // A workflow's tenant reads all its tasks through it: one of another tenant would leak there.
      [
        'a task of another tenant',
        {
          metadata: { tenant_id: 'acme' },
          tasks: [
            { task_id: 'a', task_type: 'noop' },
            { task_id: 'b', task_type: 'noop', metadata: { tenant_id: 'globex' } },
          ],
        },
        400,
        'VALIDATION_FAILED',
        { field: 'tasks[1].metadata.tenant_id' },
      ],
      [
        "a task naming a tenant in the default tenant's workflow",
        { tasks: [{ task_id: 'a', task_type: 'noop', metadata: { tenant_id: 'acme' } }] },
        400,
        'VALIDATION_FAILED',
        { field: 'tasks[0].metadata.tenant_id' },
      ],
    ];
    for (const [name, body, status, code, details] of cases) {
      it(name, async () => {
        const res = await post(body);
        expect(res.statusCode).to.equal(status);
        expect(res.json().error.code).to.equal(code);
        expect(res.json().error.details).to.deep.include(details);
        await expectNothingStored();
      });
    }

    it("a task that names its workflow's own tenant is accepted", async () => {
      const res = await post({
        metadata: { tenant_id: 'acme' },
        tasks: [{ task_id: 'a', task_type: 'noop', metadata: { tenant_id: 'acme', correlation_id: 'c1' } }],
      });
      expect(res.statusCode).to.equal(202);
    });

    it('a cycle downstream of valid tasks names only the ids on the cycle', async () => {
      const res = await post({
        tasks: [
          { task_id: 'root', task_type: 'noop' },
          { task_id: 'p', task_type: 'noop', dependencies: ['root', 'r'] },
          { task_id: 'q', task_type: 'noop', dependencies: ['p'] },
          { task_id: 'r', task_type: 'noop', dependencies: ['q'] },
          { task_id: 'after', task_type: 'noop', dependencies: ['r'] },
        ],
      });
      expect(res.statusCode).to.equal(400);
      expect(res.json().error.details.cycle).to.have.members(['p', 'q', 'r']);
      await expectNothingStored();
    });

    it('more than workflowMaxTasks → 413 WORKFLOW_TOO_LARGE with the limit and the count', async () => {
      const tasks = Array.from({ length: 10_001 }, (_, i) => ({ task_id: `t${i}`, task_type: 'noop' }));
      const res = await post({ tasks });
      expect(res.statusCode).to.equal(413);
      expect(res.json().error).to.include({ code: 'WORKFLOW_TOO_LARGE' });
      expect(res.json().error.details).to.deep.equal({ field: 'tasks', max: 10_000, count: 10_001 });
      await expectNothingStored();
    });

    it('more dependencies in all than workflowMaxDependencies → 413 WORKFLOW_TOO_LARGE naming the limit; exactly the limit is taken', async () => {
      const small = await apiFixture({ workflowMaxDependencies: 6 });
      try {
        const layer = (n: number, deps: string[]) =>
          Array.from({ length: n }, (_, i) => ({ task_id: `${deps.length ? 'b' : 'a'}${i}`, task_type: 'noop', dependencies: deps }));
        const a = ['a0', 'a1', 'a2'];
        const tooMany = await small.app.inject({
          method: 'POST',
          url: '/api/v1/workflows',
          payload: { tasks: [...layer(3, []), ...layer(3, a)] },
        });
        expect(tooMany.statusCode).to.equal(413);
        expect(tooMany.json().error.code).to.equal('WORKFLOW_TOO_LARGE');
        expect(tooMany.json().error.details).to.deep.equal({ field: 'tasks', limit: 'dependencies', max: 6, count: 9 });
        expect(tooMany.json().error.message).to.match(/at most 6 dependencies in all; this one has 9 .*a \+ b dependencies, not a × b/);
        const barrier = { task_id: 'barrier', task_type: 'noop', dependencies: a };
        const fine = await small.app.inject({
          method: 'POST',
          url: '/api/v1/workflows',
          payload: { tasks: [...layer(3, []), barrier, ...layer(3, ['barrier'])] },
        });
        expect(fine.statusCode, fine.body).to.equal(202);
      } finally {
        await small.close();
      }
    });

    it('the actor-message path (service) throws the same errors', async () => {
      const err = await f.workflows
        .submit({
          tasks: [
            { task_id: 'X', task_type: 'noop', dependencies: ['Y'] },
            { task_id: 'Y', task_type: 'noop', dependencies: ['X'] },
          ],
        })
        .catch((e) => e);
      expect(err.code).to.equal('INVALID_WORKFLOW');
      expect(err.details.cycle).to.deep.equal(['X', 'Y']);
    });
  });

  it('a body over workflowBodyLimitBytes → 413 PAYLOAD_TOO_LARGE naming that limit, nothing stored', async () => {
    const small = await apiFixture({ workflowBodyLimitBytes: 2048 });
    try {
      const tasks = Array.from({ length: 100 }, (_, i) => ({ task_id: `t${i}`, task_type: 'noop' }));
      const res = await small.app.inject({ method: 'POST', url: '/api/v1/workflows', payload: { tasks } });
      expect(res.statusCode).to.equal(413);
      expect(res.json().error).to.include({ code: 'PAYLOAD_TOO_LARGE' });
      expect(res.json().error.details).to.include({ field: 'body', limit_bytes: 2048 });
      expect((await small.app.inject({ method: 'GET', url: '/api/v1/workflows' })).json().workflows).to.deep.equal([]);
    } finally {
      await small.close();
    }
  });

  it('a chain of 10,000 tasks is accepted: one root PENDING, 9,999 BLOCKED', async () => {
    const tasks = Array.from({ length: 10_000 }, (_, i) => ({
      task_id: `c${i}`,
      task_type: 'noop',
      ...(i > 0 ? { dependencies: [`c${i - 1}`] } : {}),
    }));
    const res = await post({ tasks });
    expect(res.statusCode).to.equal(202);
    const counts = (await get(`/api/v1/workflows/${res.json().workflow_id}`)).body.task_counts;
    expect(counts).to.include({ PENDING: 1, BLOCKED: 9_999 });
  });

  it('cancel: tasks not started are CANCELLED at once (200); a running one gets its abort (202) and ends the workflow CANCELLED', async () => {
    const ack = (await post(diamond())).json();
    const a = ack.task_ids.a;
    const [claimed] = await f.store.claimTasks([a], 'worker-1', f.clock.now(), 60_000);
    const res = await f.app.inject({ method: 'POST', url: `/api/v1/workflows/${ack.workflow_id}/cancel` });
    expect(res.statusCode).to.equal(202);
    expect(res.json()).to.deep.equal({ workflow_id: ack.workflow_id, status: 'RUNNING', cancel_requested: true, running_task_ids: [a] });
    expect(f.aborted).to.deep.equal([{ taskId: a, attempt: claimed.attempt }]);
    const blocked = (await get(`/api/v1/tasks/${ack.task_ids.d}`)).body;
    expect(blocked.status).to.equal('CANCELLED');
    expect(blocked.error).to.include({ type: 'workflow_cancelled' });
    await f.store.completeAttempts(
      [{ taskId: a, attempt: claimed.attempt, state: 'CANCELLED', retryAt: null, result: null, error: null, durationMs: 1 }],
      f.clock.now(),
    );
    const wf = (await get(`/api/v1/workflows/${ack.workflow_id}`)).body;
    expect(wf).to.include({ status: 'CANCELLED', cancel_requested: true, open_tasks: 0 });
    expect(wf.completed_at).to.be.a('string');
    const again = await f.app.inject({ method: 'POST', url: `/api/v1/workflows/${ack.workflow_id}/cancel` });
    expect(again.statusCode).to.equal(409);
    expect(again.json().error).to.include({ code: 'WORKFLOW_STATE_CONFLICT' });
    expect(again.json().error.details.status).to.equal('CANCELLED');
  });

  it('cancel with nothing running: 200 and CANCELLED at once', async () => {
    const ack = (await post(diamond())).json();
    const res = await f.app.inject({ method: 'POST', url: `/api/v1/workflows/${ack.workflow_id}/cancel` });
    expect(res.statusCode).to.equal(200);
    expect(res.json()).to.include({ status: 'CANCELLED' });
    expect((await get(`/api/v1/workflows/${ack.workflow_id}`)).body.task_counts).to.include({ CANCELLED: 4 });
  });

  it('cancelling one workflow task on its own cancels its descendants; the workflow ends CANCELLED', async () => {
    const ack = (await post(diamond())).json();
    const id = (k: string) => ack.task_ids[k];
    await finish(id('a'), 'SUCCEEDED');
    expect((await f.app.inject({ method: 'POST', url: `/api/v1/tasks/${id('b')}/cancel` })).statusCode).to.equal(200);
    expect((await get(`/api/v1/tasks/${id('d')}`)).body.error).to.include({ type: 'upstream_failed' });
    await finish(id('c'), 'SUCCEEDED');
    expect((await get(`/api/v1/workflows/${ack.workflow_id}`)).body.status).to.equal('CANCELLED');
  });

  it('list: newest first, status filter, pagination; 404 for unknown ids', async () => {
    const w1 = (await post(diamond())).json().workflow_id;
    f.clock.advance(1);
    const w2 = (await post({ tasks: [{ task_id: 'x', task_type: 'noop' }] })).json().workflow_id;
    await f.app.inject({ method: 'POST', url: `/api/v1/workflows/${w2}/cancel` });
    const all = (await get('/api/v1/workflows')).body;
    expect(all.workflows.map((w: any) => w.workflow_id)).to.deep.equal([w2, w1]);
    expect(all.workflows[0]).to.not.have.any.keys('tasks', 'task_ids', 'task_details');
    expect((await get('/api/v1/workflows?status=RUNNING')).body.workflows.map((w: any) => w.workflow_id)).to.deep.equal([w1]);
    const p1 = (await get('/api/v1/workflows?limit=1')).body;
    const p2 = (await get(`/api/v1/workflows?limit=1&cursor=${p1.next_cursor}`)).body;
    expect([...p1.workflows, ...p2.workflows].map((w: any) => w.workflow_id)).to.deep.equal([w2, w1]);
    expect(p2.next_cursor).to.equal(null);
    expect((await get('/api/v1/workflows?status=DONE')).status).to.equal(400);
    expect((await get('/api/v1/workflows?limit=0')).status).to.equal(400);
    const missing = await get('/api/v1/workflows/nope');
    expect(missing.status).to.equal(404);
    expect(missing.body.error.code).to.equal('WORKFLOW_NOT_FOUND');
    expect((await f.app.inject({ method: 'POST', url: '/api/v1/workflows/nope/cancel' })).statusCode).to.equal(404);
  });
});
