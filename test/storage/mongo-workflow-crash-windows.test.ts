/**
 * Workflows on the MongoDB adapter without transactions: a process dying between the
 * single-document writes of insertWorkflow, completeAttempts, cancelWorkflow and replayDead (the
 * crash windows stated in src/storage/mongo/ops/insert-workflow.ts, workflow-progress.ts,
 * cancel-workflow.ts), simulated by collections that fail from a chosen call on (./mongo-crash.ts),
 * then what readers see meanwhile and how the repair pass (purgeFinished → repair-workflows.ts)
 * converges. Skipped without MONGODB_URI. The task-level crash windows are in
 * mongo-crash-windows.test.ts.
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { Db, MongoClient } from 'mongodb';
import { collectionsOf, MongoCollections } from '../../src/storage/mongo/collections';
import { MongoStore } from '../../src/storage/mongo/mongo-store';
import { cancelWorkflow } from '../../src/storage/mongo/ops/cancel-workflow';
import { completeAttempts } from '../../src/storage/mongo/ops/complete-attempts';
import { replayDead } from '../../src/storage/mongo/ops/dead-letter';
import { insertWorkflow } from '../../src/storage/mongo/ops/insert-workflow';
import { WORKFLOW_TAKEOVER_MS } from '../../src/storage/mongo/ops/repair-workflows';
import { DIAMOND, run, workflow } from './conformance/workflows';
import { completion, PARTITIONS, rejectionOf, T0, taskError } from './fixtures';
import { at, crashing, CrashPoint, interleaved, SimulatedCrash } from './mongo-crash';

const uri = process.env.MONGODB_URI;

describe('MongoStore workflows without transactions: crash windows and their repair', () => {
  if (!uri) {
    it.skip('needs MONGODB_URI (a MongoDB or FerretDB server; `source .ci/services.sh` starts one)', () => undefined);
    return;
  }
  let client: MongoClient;
  let db: Db;
  let store: MongoStore;
  let c: MongoCollections;

  beforeEach(async () => {
    const database = `wfcrash_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
    client = new MongoClient(uri);
    await client.connect();
    db = client.db(database);
    c = collectionsOf(db);
    store = new MongoStore(uri, { database });
    await store.open(PARTITIONS);
  });

  afterEach(async () => {
    await store.close();
    await db.dropDatabase();
    await client.close();
  });

  /** Runs `op` on collections that die at `point`; expects it to have died there. */
  async function dieDuring(point: CrashPoint, op: (cc: MongoCollections) => Promise<unknown>): Promise<void> {
    const crash = crashing(c, point);
    let error: unknown = null;
    await op(crash.c).catch((err: unknown) => (error = err));
    expect(crash.crashed(), 'the crash point was reached').to.equal(true);
    expect(error).to.be.instanceOf(SimulatedCrash);
  }

  /** The repair pass as Maintenance runs it, `afterMs` after T0 (nothing is old enough to purge). */
  const repairAt = (afterMs: number) => store.purgeFinished(T0 - 1, T0 + afterMs, 100);
  const states = (wf: string, locals: string[]) =>
    Promise.all(locals.map(async (l) => (await c.tasks.findOne({ _id: `${wf}.${l}` }))?.state));
  const dueIds = async () => {
    const ids: string[] = [];
    for (let p = 0; p < PARTITIONS; p++) ids.push(...(await store.loadDue(p, T0 + 1e9, 100)).map((e) => e.id));
    return ids.sort();
  };
  const limbo = async (now: number) => (await store.auditScan(now, T0 - 1, 100)).blockedLimbo;
  const isMet = (args: unknown[]) => 'met_deps' in (args[0] as object);

  it('insert died before its commit point (CREATING, every task stored): nothing visible or due; the repair undoes it after the takeover age', async () => {
    await dieDuring(at('workflows', 'updateOne'), (cc) => insertWorkflow(cc, workflow('wc1', DIAMOND)));
    expect(await c.tasks.countDocuments({ workflow_id: 'wc1' })).to.equal(5);
    expect(await store.getWorkflow('wc1')).to.equal(null);
    expect(await store.getWorkflowTasks('wc1')).to.deep.equal([]);
    expect((await store.listWorkflows({ limit: 10 })).workflows).to.deep.equal([]);
    expect(await store.getTask('wc1.A')).to.equal(null);
    expect((await store.listTasks({ limit: 10 })).tasks).to.deep.equal([]);
    expect(await dueIds()).to.deep.equal([]);
    expect(await store.claimTasks(['wc1.A'], 'w-1', T0, 1000)).to.deep.equal([]);
    expect(await store.cancelTask('wc1.B', T0)).to.deep.equal({ kind: 'not_found' });
    expect(await limbo(T0 + 1)).to.deep.equal([]);

    await repairAt(WORKFLOW_TAKEOVER_MS); // not older than the takeover age: maybe an insert under way
    expect(await c.workflows.findOne({ _id: 'wc1' })).to.include({ status: 'CREATING' });
    await repairAt(WORKFLOW_TAKEOVER_MS + 1);
    expect(await c.workflows.findOne({ _id: 'wc1' })).to.equal(null);
    expect(await c.tasks.countDocuments({ workflow_id: 'wc1' })).to.equal(0);
    // The client's retry (a new submission) is stored normally.
    await store.insertWorkflow(workflow('wc1b', DIAMOND));
    expect(await store.getWorkflow('wc1b')).to.include({ status: 'RUNNING', openTasks: 5 });
  });

  it('insert died inside its insertMany (a prefix of the tasks stored): invisible, and the repair deletes the prefix', async () => {
    // Dies inside the insertMany, after the server stored its first two tasks.
    const point: CrashPoint = (coll, method, args) =>
      coll === 'tasks' && method === 'insertMany' && ((real) => real((args[0] as unknown[]).slice(0, 2), args[1]));
    await dieDuring(point, (cc) => insertWorkflow(cc, workflow('wc2', DIAMOND)));
    expect(await c.tasks.countDocuments({ workflow_id: 'wc2' })).to.equal(2);
    expect(await store.getWorkflow('wc2')).to.equal(null);
    expect(await dueIds()).to.deep.equal([]);
    await repairAt(WORKFLOW_TAKEOVER_MS + 1);
    expect(await c.tasks.countDocuments({ workflow_id: 'wc2' })).to.equal(0);
    expect(await c.workflows.countDocuments({})).to.equal(0);
  });

  it('insert died while releasing its tasks (RELEASING): the repair completes it, releasing what a root that ran meanwhile made ready', async () => {
    // Dies at the second release write: roots PENDING already, the other holds not yet released.
    await dieDuring(at('tasks', 'updateMany', 2), (cc) => insertWorkflow(cc, workflow('wc3', DIAMOND)));
    expect(await c.workflows.findOne({ _id: 'wc3' })).to.include({ status: 'RELEASING' });
    expect(await store.getWorkflow('wc3')).to.equal(null);
    expect(await dueIds()).to.deep.equal(['wc3.A']);
    expect(await store.getTask('wc3.B')).to.equal(null); // still held
    // The root runs before the repair comes; its end is counted, the held B and C stay BLOCKED.
    const a = await run(store, 'wc3.A', 'SUCCEEDED', T0 + 10, 'a');
    expect(a.result.released ?? []).to.deep.equal([]);
    expect(await states('wc3', ['B', 'C'])).to.deep.equal(['BLOCKED', 'BLOCKED']);

    await repairAt(WORKFLOW_TAKEOVER_MS + 1);
    expect(await store.getWorkflow('wc3')).to.include({ status: 'RUNNING', openTasks: 4 });
    expect(await states('wc3', ['A', 'B', 'C', 'D', 'E'])).to.deep.equal(['SUCCEEDED', 'PENDING', 'PENDING', 'BLOCKED', 'BLOCKED']);
    expect(await c.tasks.countDocuments({ workflow_id: 'wc3', wf_hold: { $exists: true } })).to.equal(0);
    expect(await limbo(T0 + WORKFLOW_TAKEOVER_MS + 2)).to.deep.equal([]);
    expect((await store.getWorkflowTasks('wc3')).map((t) => t.workflowTaskId)).to.deep.equal(['A', 'B', 'C', 'D', 'E']);
  });

  for (const [when, coll, method] of [
    ['after its tasks were stored', 'workflows', 'updateOne'],
    ['before its tasks were stored', 'tasks', 'insertMany'],
  ] as const) {
    it(`an insert slower than the takeover age loses to the repair (${when}): it cleans up and throws, nothing is left`, async () => {
      let once = true;
      const slow = interleaved(c, async (cl, m) => {
        if (!(once && cl === coll && m === method)) return;
        once = false;
        await repairAt(WORKFLOW_TAKEOVER_MS + 1); // runs on its own collections, not through `slow`
      });
      const err = (await rejectionOf(() => insertWorkflow(slow, workflow('wc9', DIAMOND)))) as Error;
      expect(err.message).to.match(/undone/);
      expect(await c.tasks.countDocuments({})).to.equal(0);
      expect(await c.workflows.countDocuments({})).to.equal(0);
    });
  }

  it('a success whose release died (task SUCCEEDED, downstream still BLOCKED): the marker stays, the repair releases and counts', async () => {
    await store.insertWorkflow(workflow('wc4', DIAMOND));
    const [claimed] = await store.claimTasks(['wc4.A'], 'w-1', T0 + 5, 60_000);
    await dieDuring(at('tasks', 'findOneAndUpdate', 1, isMet), (cc) =>
      completeAttempts(cc, [completion('wc4.A', claimed.attempt, 'SUCCEEDED')], T0 + 10),
    );
    expect(await states('wc4', ['A', 'B', 'C'])).to.deep.equal(['SUCCEEDED', 'BLOCKED', 'BLOCKED']);
    expect(await c.tasks.findOne({ _id: 'wc4.A' })).to.include({ state: 'SUCCEEDED', wf_done: false });
    // Not limbo: the marker says the release is still to be applied (by the repair pass).
    expect(await limbo(T0 + 11)).to.deep.equal([]);
    expect(await store.getWorkflow('wc4')).to.include({ openTasks: 5 });

    await repairAt(WORKFLOW_TAKEOVER_MS + 11);
    expect(await states('wc4', ['B', 'C', 'D'])).to.deep.equal(['PENDING', 'PENDING', 'BLOCKED']);
    expect(await store.getWorkflow('wc4')).to.include({ status: 'RUNNING', openTasks: 4 });
    expect(await limbo(T0 + WORKFLOW_TAKEOVER_MS + 12)).to.deep.equal([]);
    expect(await c.tasks.countDocuments({ wf_done: false, state: { $in: ['SUCCEEDED', 'FAILED', 'DEAD', 'CANCELLED'] } })).to.equal(0);
    // A second pass changes nothing (every step is idempotent).
    await repairAt(WORKFLOW_TAKEOVER_MS + 100);
    expect(await store.getWorkflow('wc4')).to.include({ status: 'RUNNING', openTasks: 4 });
    expect((await store.getWorkflowTasks('wc4')).find((t) => t.workflowTaskId === 'D')?.unmetDependencies).to.equal(2);
  });

  it('the audit reports a real limbo: BLOCKED tasks whose upstreams all ended with nothing left to apply', async () => {
    await store.insertWorkflow(workflow('wl', DIAMOND));
    // By hand: A ended and is marked applied (wf_done), yet nothing released B and C — a bug's footprint.
    await c.tasks.updateOne({ _id: 'wl.A' }, { $set: { state: 'SUCCEEDED', completed_at: T0 + 1, wf_done: true } });
    const scan = await store.auditScan(T0 + 2, T0 - 1, 1);
    expect(scan.blockedLimboTotal).to.equal(2);
    expect(scan.blockedLimbo).to.deep.equal(['wl.B']);
  });

  it('a failure whose propagation died: the repair cancels the descendants and settles the workflow FAILED', async () => {
    await store.insertWorkflow(workflow('wc5', DIAMOND));
    const [claimed] = await store.claimTasks(['wc5.A'], 'w-1', T0 + 5, 60_000);
    const failed = completion('wc5.A', claimed.attempt, 'FAILED', { error: taskError('boom', 'Error', false) });
    await dieDuring(at('tasks', 'updateMany'), (cc) => completeAttempts(cc, [failed], T0 + 10));
    expect(await states('wc5', ['A', 'B', 'E'])).to.deep.equal(['FAILED', 'BLOCKED', 'BLOCKED']);
    expect(await store.getWorkflow('wc5')).to.include({ status: 'RUNNING' });

    await repairAt(WORKFLOW_TAKEOVER_MS + 11);
    expect(await states('wc5', ['B', 'C', 'D', 'E'])).to.deep.equal(['CANCELLED', 'CANCELLED', 'CANCELLED', 'CANCELLED']);
    expect((await store.getTask('wc5.E'))?.error).to.include({ type: 'upstream_failed' });
    expect(await store.getWorkflow('wc5')).to.include({ status: 'FAILED', openTasks: 0, completedAt: T0 + WORKFLOW_TAKEOVER_MS + 11 });
  });

  it('the last end died between the count and the final status: the repair settles the workflow', async () => {
    await store.insertWorkflow(workflow('wc6', [['A', []]]));
    const [claimed] = await store.claimTasks(['wc6.A'], 'w-1', T0 + 5, 60_000);
    await dieDuring(at('workflows', 'updateOne'), (cc) =>
      completeAttempts(cc, [completion('wc6.A', claimed.attempt, 'SUCCEEDED')], T0 + 10),
    );
    expect(await store.getWorkflow('wc6')).to.include({ status: 'RUNNING', openTasks: 0 });
    await repairAt(WORKFLOW_TAKEOVER_MS + 11);
    expect(await store.getWorkflow('wc6')).to.include({ status: 'SUCCEEDED', openTasks: 0 });
  });

  it('a workflow cancel that died after its commit point: the repair cancels the waiting tasks and settles CANCELLED', async () => {
    await store.insertWorkflow(workflow('wc7', DIAMOND));
    await dieDuring(at('tasks', 'updateMany'), (cc) => cancelWorkflow(cc, 'wc7', T0 + 10));
    expect(await store.getWorkflow('wc7')).to.include({ status: 'RUNNING', cancelRequested: true, openTasks: 5 });
    await repairAt(WORKFLOW_TAKEOVER_MS + 11);
    expect(await states('wc7', ['A', 'B', 'C', 'D', 'E'])).to.deep.equal(['CANCELLED', 'CANCELLED', 'CANCELLED', 'CANCELLED', 'CANCELLED']);
    expect(await store.getWorkflow('wc7')).to.include({ status: 'CANCELLED', openTasks: 0 });
    expect((await store.cancelWorkflow('wc7', T0 + WORKFLOW_TAKEOVER_MS + 20)).kind).to.equal('conflict');
  });

  it('a replay whose resume died: the repair puts the cancelled descendants back to BLOCKED and reopens the workflow', async () => {
    await store.insertWorkflow(workflow('wc8', DIAMOND));
    await run(store, 'wc8.A', 'SUCCEEDED', T0 + 10);
    await run(store, 'wc8.C', 'SUCCEEDED', T0 + 20);
    await run(store, 'wc8.B', 'DEAD', T0 + 30);
    expect(await store.getWorkflow('wc8')).to.include({ status: 'FAILED' });
    await dieDuring(at('tasks', 'updateOne'), (cc) => replayDead(cc, 'wc8.B', T0 + 40));
    expect(await states('wc8', ['B', 'D', 'E'])).to.deep.equal(['PENDING', 'CANCELLED', 'CANCELLED']);

    await repairAt(WORKFLOW_TAKEOVER_MS + 41);
    expect(await states('wc8', ['B', 'D', 'E'])).to.deep.equal(['PENDING', 'BLOCKED', 'BLOCKED']);
    expect(await store.getWorkflow('wc8')).to.include({ status: 'RUNNING', openTasks: 3, completedAt: null });
    const b = await run(store, 'wc8.B', 'SUCCEEDED', T0 + WORKFLOW_TAKEOVER_MS + 50);
    expect(b.result.released?.map((e) => e.id)).to.deep.equal(['wc8.D']);
  });
});
