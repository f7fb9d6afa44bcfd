/**
 * The PostgreSQL store runs a write that is one statement, alone in its batch, without BEGIN and
 * COMMIT (src/storage/postgres/write-queue.ts), and completes tasks in no workflow without the
 * workflow lock (ops/complete-attempts.ts, "Plain rounds"). The claim hands out the task's
 * workflow (null for a plain task), its completion carries it back; a completion that says "no
 * workflow" for a workflow task (a wrong hint) must still run the workflow step: the downstream
 * task is released and the workflow ends. Skipped without POSTGRES_URL (failed in CI).
 */
import { expect } from 'chai';
import { PostgresStore } from '../../src/storage/postgres/postgres-store';
import { dropSchema, freshSchema, postgresUrl, registerMissingPostgres } from '../helpers/postgres-schema';
import { workflow } from './conformance/workflows';
import { completion, newTask, PARTITIONS, T0 } from './fixtures';

const url = postgresUrl();

describe('PostgresStore: bare statements and plain completions', () => {
  if (!url) {
    registerMissingPostgres();
    return;
  }
  let schema: string;
  let store: PostgresStore;

  beforeEach(async () => {
    schema = freshSchema('bare');
    store = new PostgresStore(url, { schema });
    await store.open(PARTITIONS);
  });

  afterEach(async () => {
    await store.close();
    await dropSchema(url, schema);
  });

  const bare = async () => (await store.commitStats())?.bare ?? 0;

  it('a claim alone and a completion of plain tasks alone commit as single statements, and what they wrote is stored', async () => {
    await store.insertTasks([newTask('p1', { state: 'PENDING', dueAt: T0 }), newTask('p2', { state: 'PENDING', dueAt: T0 })]);
    const before = await bare();
    const claimed = await store.claimTasks(['p1', 'p2'], 'w', T0 + 1, 60_000);
    expect(claimed.map((t) => [t.id, t.workflowId])).to.deep.equal([
      ['p1', null],
      ['p2', null],
    ]);
    expect(await bare()).to.equal(before + 1);
    const results = await store.completeAttempts(
      claimed.map((t) => completion(t.id, t.attempt, 'SUCCEEDED', { workflowId: t.workflowId, result: { n: t.id } })),
      T0 + 5,
    );
    expect(results.map((r) => [r.taskId, r.applied, r.state])).to.deep.equal([
      ['p1', true, 'SUCCEEDED'],
      ['p2', true, 'SUCCEEDED'],
    ]);
    expect(await bare()).to.equal(before + 2);
    expect(await store.getTask('p1')).to.include({ state: 'SUCCEEDED', completedAt: T0 + 5 });
    // A duplicate (the same attempt again) is refused as before, bare too.
    const again = await store.completeAttempts([completion('p2', claimed[1].attempt, 'FAILED', { workflowId: null })], T0 + 6);
    expect(again).to.deep.equal([{ taskId: 'p2', applied: false, state: 'SUCCEEDED', entry: null, taskType: 'echo' }]);
  });

  it('a completion that says "no workflow" for a workflow task still releases its downstream task and ends the workflow', async () => {
    await store.insertWorkflow(
      workflow('wf', [
        ['A', []],
        ['B', ['A']],
      ]),
    );
    await store.markPending(['wf.A'], T0);
    const [a] = await store.claimTasks(['wf.A'], 'w', T0 + 1, 60_000);
    expect(a.workflowId).to.equal('wf');
    const [done] = await store.completeAttempts([completion('wf.A', a.attempt, 'SUCCEEDED', { workflowId: null })], T0 + 2);
    expect(done).to.include({ applied: true, state: 'SUCCEEDED' });
    expect(done.released?.map((e) => e.id)).to.deep.equal(['wf.B']);
    expect((await store.getTask('wf.B'))?.state).to.equal('PENDING');
    const [b] = await store.claimTasks(['wf.B'], 'w', T0 + 3, 60_000);
    expect(b.workflowId).to.equal('wf');
    const [last] = await store.completeAttempts([completion('wf.B', b.attempt, 'FAILED', { workflowId: null })], T0 + 4);
    expect(last).to.include({ applied: true, state: 'FAILED' });
    expect(await store.getWorkflow('wf')).to.include({ status: 'FAILED', openTasks: 0 });
  });

  it('completions of the same task twice in one batch are written one after the other (not bare)', async () => {
    await store.insertTasks([newTask('d1', { state: 'PENDING', dueAt: T0 })]);
    const [t] = await store.claimTasks(['d1'], 'w', T0 + 1, 60_000);
    const before = await bare();
    const results = await store.completeAttempts(
      [completion('d1', t.attempt, 'SUCCEEDED', { workflowId: null }), completion('d1', t.attempt, 'FAILED', { workflowId: null })],
      T0 + 2,
    );
    expect(results.map((r) => [r.applied, r.state])).to.deep.equal([
      [true, 'SUCCEEDED'],
      [false, 'SUCCEEDED'],
    ]);
    expect(await bare()).to.equal(before);
  });
});
