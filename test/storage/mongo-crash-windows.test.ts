/**
 * MongoDB adapter specifics the shared conformance suite cannot see: the states a process leaves
 * when it dies between the single-document writes of one operation (no transactions), and two
 * store instances (two nodes) racing on one database. Each test builds the half-done state by hand
 * and checks that the next call converges, as the op headers in src/storage/mongo/ops/ claim.
 * Workflow operations have their own file (mongo-workflow-crash-windows.test.ts). Skipped without
 * MONGODB_URI.
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { Db, MongoClient } from 'mongodb';
import { cronInstanceId } from '../../src/domain/cron/cron-definition';
import { IDEMPOTENCY_CONFLICT } from '../../src/storage/store';
import { IdempotencyKeyConflict } from '../../src/storage/idempotency-conflict';
import { MongoStore } from '../../src/storage/mongo/mongo-store';
import { KEY_TAKEOVER_MS } from '../../src/storage/mongo/ops/insert-tasks';
import { cronRecord } from './conformance/cron';
import { acks, newTask, PARTITIONS, rejectionOf, T0 } from './fixtures';

const uri = process.env.MONGODB_URI;

describe('MongoStore without transactions: crash windows and racing nodes', () => {
  if (!uri) {
    it.skip('needs MONGODB_URI (a MongoDB or FerretDB server; `source .ci/services.sh` starts one)', () => undefined);
    return;
  }
  let client: MongoClient;
  let db: Db;
  let database: string;
  let stores: MongoStore[];

  /** A store on the test's database, opened; closed after the test. */
  async function node(): Promise<MongoStore> {
    const s = new MongoStore(uri as string, { database });
    await s.open(PARTITIONS);
    stores.push(s);
    return s;
  }

  beforeEach(async () => {
    database = `crash_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
    stores = [];
    client = new MongoClient(uri);
    await client.connect();
    db = client.db(database);
  });

  afterEach(async () => {
    for (const s of stores) await s.close();
    await db.dropDatabase();
    await client.close();
  });

  const keyed = (id: string, hash: string, createdAt: number) =>
    newTask(id, { idempotencyKey: 'k', idempotency: { requestHash: hash, expiresAt: createdAt + 3_600_000 }, createdAt });

  /** The state of a call that claimed key `k` for `heldId` and died before committing it. */
  async function deadClaim(heldId: string, hash: string, claimedAt: number): Promise<void> {
    await db.collection('idempotency_keys').insertOne({
      tenant_id: 'tenant-a',
      key: 'k',
      task_id: heldId,
      request_hash: hash,
      expires_at: claimedAt + 3_600_000,
      status: 'pending',
      batch: 'dead-batch',
      claimed_at: claimedAt,
    });
  }

  it("a seq range handed out twice (FerretDB's $inc is not atomic across nodes): the insert numbers the rest anew, nothing is lost", async () => {
    const s = await node();
    await s.insertTasks([newTask('first')]); // seq 1
    await db.collection('meta').updateOne({ _id: 'task_seq' as never }, { $set: { value: 0 } }); // the next range starts at 1 again
    const results = await s.insertTasks([newTask('second'), newTask('third')]);
    expect(acks(results)).to.deep.equal([
      { taskId: 'second', replayed: false },
      { taskId: 'third', replayed: false },
    ]);
    const docs = await db
      .collection('tasks')
      .find({}, { projection: { seq: 1 } })
      .toArray();
    const seqs = docs.map((d) => d.seq as number);
    // The answer carries the numbers the tasks were stored with, after the renumbering.
    const stored = new Map(docs.map((d) => [String(d._id), d.seq as number]));
    expect(results.map((r) => r.seq)).to.deep.equal([stored.get('second'), stored.get('third')]);
    expect(new Set(seqs).size).to.equal(3);
    expect((await s.listTasks({ limit: 10 })).tasks.map((t) => t.id).sort()).to.deep.equal(['first', 'second', 'third']);
  });

  it('a cron seq handed out twice: the definition takes a new number; a taken id still fails as a duplicate', async () => {
    const s = await node();
    await s.createCron(cronRecord('cron-1'));
    await db.collection('meta').updateOne({ _id: 'cron_seq' as never }, { $set: { value: 0 } });
    await s.createCron(cronRecord('cron-2'));
    const seqs = (
      await db
        .collection('cron_tasks')
        .find({}, { projection: { seq: 1 } })
        .toArray()
    ).map((d) => d.seq as number);
    expect(new Set(seqs).size).to.equal(2);
    expect((await s.getCron('cron-2'))?.id).to.equal('cron-2');
    const err = await s.createCron(cronRecord('cron-1')).then(
      () => null,
      (e: unknown) => e,
    );
    expect((err as { code?: number } | null)?.code).to.equal(11000);
  });

  it('a retry adopts the task a dead call inserted under its key claim: one task, answered as new', async () => {
    const s = await node();
    await s.insertTasks([keyed('dead-1', 'h', T0)]); // then pretend its key commit never happened:
    await db.collection('idempotency_keys').updateOne({ key: 'k' }, { $set: { status: 'pending', batch: 'dead-batch' } });
    const later = T0 + KEY_TAKEOVER_MS + 1;
    expect(acks(await s.insertTasks([keyed('retry-1', 'h', later)]))).to.deep.equal([{ taskId: 'dead-1', replayed: false }]);
    expect(await s.getTask('retry-1')).to.equal(null);
    expect((await s.listTasks({ limit: 10 })).tasks.map((t) => t.id)).to.deep.equal(['dead-1']);
    // The key is committed now: the next repeat is a plain replay.
    expect(await s.insertTasks([keyed('retry-2', 'h', later + 1)])).to.deep.equal([{ taskId: 'dead-1', replayed: true, seq: 0 }]);
  });

  it('a retry inserts the task under the id a dead call reserved when the task never got stored', async () => {
    const s = await node();
    await deadClaim('reserved-1', 'h', T0);
    const [r] = await s.insertTasks([keyed('retry-1', 'h', T0 + KEY_TAKEOVER_MS + 1)]);
    expect(acks([r])).to.deep.equal([{ taskId: 'reserved-1', replayed: false }]);
    const t = await s.getTask('reserved-1');
    expect(t).to.include({ state: 'PENDING', idempotencyKey: 'k' });
    expect(t!.partition).to.equal(newTask('reserved-1').partition);
  });

  it('a fresh pending claim of the same request answers IdempotencyConflict (in use), a stale one of another request is simply taken', async () => {
    const s = await node();
    await deadClaim('reserved-2', 'h', T0);
    const err = (await rejectionOf(() => s.insertTasks([keyed('early', 'h', T0 + 10)]))) as IdempotencyKeyConflict;
    expect(err.name).to.equal(IDEMPOTENCY_CONFLICT);
    expect(err).to.be.instanceOf(IdempotencyKeyConflict);
    expect(err.message).to.match(/in use/);
    expect(err.details).to.include({ taskId: 'reserved-2', key: 'k' });
    const [r] = await s.insertTasks([keyed('other-request', 'h2', T0 + KEY_TAKEOVER_MS + 1)]);
    expect(acks([r])).to.deep.equal([{ taskId: 'other-request', replayed: false }]);
  });

  it('two nodes submitting the same keyed request at once store one task', async () => {
    const [a, b] = [await node(), await node()];
    const outcomes = await Promise.allSettled([a.insertTasks([keyed('node-a', 'h', T0)]), b.insertTasks([keyed('node-b', 'h', T0)])]);
    const stored = (await a.listTasks({ limit: 10 })).tasks.map((t) => t.id);
    expect(stored).to.have.length(1);
    for (const o of outcomes) {
      if (o.status === 'fulfilled') expect(o.value[0].taskId).to.equal(stored[0]);
      else expect((o.reason as Error).name).to.equal(IDEMPOTENCY_CONFLICT);
    }
  });

  it('two nodes claiming the same task: one attempt (servers with atomic single-document updates)', async function () {
    const [a, b] = [await node(), await node()];
    // FerretDB 1.x applies an update as read-then-write: two connections can both win (see MongoCapabilities).
    if (!a.capabilities?.atomicUpdates) this.skip();
    await a.insertTasks([newTask('race')]);
    const [ra, rb] = await Promise.all([a.claimTasks(['race'], 'wa', T0, 1000), b.claimTasks(['race'], 'wb', T0, 1000)]);
    expect(ra.length + rb.length).to.equal(1);
    expect((await a.getTask('race'))!.attempts).to.equal(1);
  });

  it('a firing whose process died before its compare-and-set completes on the next evaluation, without skipping its own instance', async () => {
    const s = await node();
    const cron = cronRecord('crash-cron', { overlapPolicy: 'skip' });
    await s.createCron(cron);
    const fireTime = T0 + 1000;
    const id = cronInstanceId('crash-cron', fireTime);
    const firing = {
      cronId: cron.id,
      expectedNextFireTime: cron.nextFireTime as number,
      expectedVersion: cron.version,
      nextFireTime: fireTime + 1000,
      overlapPolicy: cron.overlapPolicy,
      maxQueued: cron.maxCatchUp,
      instances: [
        {
          fireTime,
          outcome: 'created' as const,
          reason: null,
          task: newTask(id, { dueAt: fireTime, scheduledAt: fireTime, state: 'PENDING' }),
        },
      ],
    };
    await s.fireCrons([firing], fireTime);
    // Undo the compare-and-set only: the instance and the fire record stay, as after a crash.
    await db
      .collection('cron_tasks')
      .updateOne({ _id: cron.id } as never, { $set: { next_fire_time: cron.nextFireTime, last_fire_time: null } });

    const [again] = await s.fireCrons([firing], fireTime + 5);
    expect(again.applied).to.equal(true);
    expect(again.entries.map((e) => e.id)).to.deep.equal([id]);
    expect(again.records).to.deep.equal([
      { cronId: cron.id, fireTime, outcome: 'created', reason: null, taskId: id, recordedAt: fireTime },
    ]);
    expect((await s.listCronFires(cron.id, { limit: 10 })).fires).to.have.length(1);
    expect(await s.getCron(cron.id)).to.include({ nextFireTime: fireTime + 1000, lastFireTime: fireTime });
    expect((await s.listTasks({ limit: 10 })).tasks.map((t) => t.id)).to.deep.equal([id]);
  });

  it('reports the capabilities it found, and works with or without TTL and partial indexes', async () => {
    const s = await node();
    expect(s.capabilities).to.have.keys(['ttlIndexes', 'partialIndexes', 'atomicUpdates']);
    const indexes = (await db.collection('tasks').indexes()).map((i) => i.name);
    expect(indexes).to.include.members(['tasks_partition_state_due', 'tasks_state_seq', 'tasks_seq', 'tasks_cron_live']);
    const keyIndexes = await db.collection('idempotency_keys').indexes();
    expect(keyIndexes.find((i) => i.name === 'idempotency_tenant_key')?.unique).to.equal(true);
  });
});
