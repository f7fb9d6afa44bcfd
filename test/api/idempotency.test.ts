import { expect } from 'chai';
import { apiFixture, ApiFixture } from '../helpers/api-fixture';

/** Idempotency keys (DESIGN §10; shared/cases/behaviour.md C7). */
describe('REST: idempotency keys', () => {
  let f: ApiFixture;
  beforeEach(async () => {
    f = await apiFixture({ idempotencyRetentionMs: 60_000 });
  });
  afterEach(async () => f.close());

  const submit = (body: unknown) =>
    f.app.inject({ method: 'POST', url: '/api/v1/tasks', headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body) });

  it('C7a: the same key and body → 200, the original task id and its real state, nothing new stored', async () => {
    const body = { task_type: 'echo', payload: { order: 42, lines: [1, 2] }, idempotency_key: 'order-42' };
    const first = await submit(body);
    expect(first.statusCode).to.equal(202);
    const id = first.json().task_id;
    await f.store.claimTasks([id], 'worker-1', f.clock.now(), 60_000); // it is running now
    // same request, keys in another order
    const again = await submit({ idempotency_key: 'order-42', payload: { lines: [1, 2], order: 42 }, task_type: 'echo' });
    expect(again.statusCode).to.equal(200);
    expect(again.headers['idempotent-replayed']).to.equal('true');
    expect(again.json()).to.include({ task_id: id, status: 'RUNNING', idempotent_replayed: true });
    expect(Object.values(await f.store.countByState()).reduce((a, b) => a + b)).to.equal(1);
    expect(f.stored.map((e) => e.id)).to.deep.equal([id]);
  });

  it("a task adopted under another id (MongoDB's crash window) is acknowledged and offered under the stored id", async () => {
    // A dead call of the same request stored its task under its own id; the retry's insert adopts it.
    const first = await submit({ task_type: 'echo', payload: 1 });
    const adopted = (await f.store.getTask(first.json().task_id))!;
    f.stored.length = 0;
    const insertTasks = f.store.insertTasks.bind(f.store);
    f.store.insertTasks = async (tasks) =>
      tasks.length === 1 ? [{ taskId: adopted.id, replayed: false, seq: adopted.seq }] : insertTasks(tasks);
    const retry = await submit({ task_type: 'echo', payload: 1, idempotency_key: 'k-adopt' });
    expect(retry.statusCode).to.equal(202);
    expect(retry.json()).to.include({ task_id: adopted.id, status: 'PENDING' });
    expect(retry.json()).to.not.have.property('idempotent_replayed');
    expect(f.stored).to.deep.equal([
      {
        id: adopted.id,
        partition: adopted.partition,
        seq: adopted.seq,
        dueAt: adopted.dueAt,
        priority: adopted.priority,
        tenantId: adopted.tenantId,
        taskType: 'echo',
        state: 'PENDING',
        queue: adopted.queue,
      },
    ]);
  });

  it('a repeat that spells out defaults, names its own tenant, or writes the same instant with another offset is the same request', async () => {
    const first = await submit({ task_type: 'echo', payload: 1, scheduled_at: '2030-01-01T10:00:00+01:00', idempotency_key: 'd' });
    const id = first.json().task_id;
    for (const body of [
      { task_type: 'echo', payload: 1, scheduled_at: '2030-01-01T09:00:00Z', idempotency_key: 'd' },
      { task_type: 'echo', payload: 1, scheduled_at: '2030-01-01T09:00:00Z', idempotency_key: 'd', priority: 'medium', queue: 'default' },
      { task_type: 'echo', payload: 1, scheduled_at: '2030-01-01T09:00:00Z', idempotency_key: 'd', metadata: { tenant_id: 'default' } },
    ]) {
      const again = await submit(body);
      expect(again.statusCode, JSON.stringify(body)).to.equal(200);
      expect(again.json().task_id).to.equal(id);
    }
    expect((await submit({ task_type: 'echo', payload: 1, idempotency_key: 'd', priority: 'high' })).statusCode).to.equal(409);
  });

  it('C7b: the same key with a different payload → 409 IDEMPOTENCY_CONFLICT naming the original task; nothing stored', async () => {
    const id = (await submit({ task_type: 'echo', payload: 1, idempotency_key: 'k' })).json().task_id;
    const res = await submit({ task_type: 'echo', payload: 2, idempotency_key: 'k' });
    expect(res.statusCode).to.equal(409);
    expect(res.json().error).to.include({ code: 'IDEMPOTENCY_CONFLICT' });
    expect(res.json().error.details).to.include({ field: 'idempotency_key', task_id: id, idempotency_key: 'k' });
    expect((await f.store.countByState()).PENDING).to.equal(1);
  });

  it('C7c: 50 concurrent identical submissions → one task; every response carries its id', async () => {
    const body = { task_type: 'noop', idempotency_key: 'burst' };
    const responses = await Promise.all(Array.from({ length: 50 }, () => submit(body)));
    const ids = new Set(responses.map((r) => r.json().task_id));
    expect(ids.size).to.equal(1);
    expect(responses.filter((r) => r.statusCode === 202)).to.have.length(1);
    expect(responses.filter((r) => r.statusCode === 200)).to.have.length(49);
    expect((await f.store.countByState()).PENDING).to.equal(1);
  });

  it('C7d: the same key in two tenants → two tasks', async () => {
    const a = (await submit({ task_type: 'noop', idempotency_key: 'shared', metadata: { tenant_id: 'a' } })).json();
    const b = (await submit({ task_type: 'noop', idempotency_key: 'shared', metadata: { tenant_id: 'b' } })).json();
    expect(a.task_id).to.not.equal(b.task_id);
    expect((await f.store.countByState()).PENDING).to.equal(2);
  });

  it('C7e: after the retention window the key makes a new task', async () => {
    const first = (await submit({ task_type: 'noop', idempotency_key: 'daily' })).json().task_id;
    f.clock.advance(60_000);
    const second = await submit({ task_type: 'noop', idempotency_key: 'daily', payload: 'another body is fine now' });
    expect(second.statusCode).to.equal(202);
    expect(second.json().task_id).to.not.equal(first);
  });

  it('in a batch: a repeat is answered by the original, a conflict rejects the whole batch', async () => {
    const id = (await submit({ task_type: 'noop', idempotency_key: 'b1' })).json().task_id;
    const batch = (tasks: unknown[]) =>
      f.app.inject({
        method: 'POST',
        url: '/api/v1/tasks/batch',
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ tasks }),
      });
    const ok = await batch([{ task_type: 'noop' }, { task_type: 'noop', idempotency_key: 'b1' }]);
    expect(ok.statusCode).to.equal(202);
    expect(ok.json().tasks[1]).to.include({ task_id: id, idempotent_replayed: true });
    const before = (await f.store.countByState()).PENDING;
    const bad = await batch([{ task_type: 'noop' }, { task_type: 'echo', idempotency_key: 'b1' }]);
    expect(bad.statusCode).to.equal(409);
    expect(bad.json().error.details.field).to.equal('tasks[1].idempotency_key');
    expect((await f.store.countByState()).PENDING).to.equal(before);
    // Two items of one batch with one key and different requests: the later item is named, and no
    // task is cited (the earlier item was not stored either).
    const twice = await batch([
      { task_type: 'noop', idempotency_key: 'b2' },
      { task_type: 'echo', idempotency_key: 'b2' },
    ]);
    expect(twice.statusCode).to.equal(409);
    expect(twice.json().error.details).to.include({ field: 'tasks[1].idempotency_key', task_id: null });
    expect(twice.json().error.message).to.include('tasks[0] of this batch');
    expect((await f.store.countByState()).PENDING).to.equal(before);
  });
});
