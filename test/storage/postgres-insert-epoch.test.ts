/**
 * A task stored after a partition changed hands carries the new lease's epoch (PostgreSQL store,
 * ops/task-row-insert.ts): the old owner, whose claims carry its older epoch, cannot claim or mark
 * it, even though no fence ran after it was stored. Two store instances (two nodes) on one schema.
 * Skipped without POSTGRES_URL (failed in CI).
 */
import { expect } from 'chai';
import { PostgresStore } from '../../src/storage/postgres/postgres-store';
import { dropSchema, freshSchema, postgresUrl, registerMissingPostgres } from '../helpers/postgres-schema';
import { idsInPartition, newTask, PARTITIONS, T0 } from './fixtures';

const url = postgresUrl();
const TTL = 10_000;

describe('PostgresStore: a task stored after a take-over carries the new epoch', () => {
  if (!url) {
    registerMissingPostgres();
    return;
  }
  let schema: string;
  let a: PostgresStore;
  let b: PostgresStore;

  beforeEach(async () => {
    schema = freshSchema('epoch');
    a = new PostgresStore(url, { schema, poolSize: 2 });
    await a.open(PARTITIONS);
    b = new PostgresStore(url, { schema, poolSize: 2 });
    await b.open(PARTITIONS);
  });

  afterEach(async () => {
    await a.close();
    await b.close();
    await dropSchema(url, schema);
  });

  it('the old owner neither claims nor marks it; the new owner does', async () => {
    const partition = 3;
    const [early, late, scheduled] = idsInPartition(partition, 3, 'epoch');
    const first = await a.acquireLease(partition, 'node-a', T0, TTL);
    expect(first.granted).to.equal(true);
    const oldEpoch = first.granted ? first.lease.epoch : -1;
    await a.insertTasks([newTask(early)]);
    // node-a's lease expires; node-b takes the partition over and fences it.
    const second = await b.acquireLease(partition, 'node-b', T0 + TTL, TTL);
    expect(second.granted).to.equal(true);
    const newEpoch = second.granted ? second.lease.epoch : -1;
    expect(newEpoch).to.be.greaterThan(oldEpoch);
    await b.fencePartition(partition, newEpoch);
    // Stored after the fence, with no fence after it.
    await a.insertTasks([newTask(late, { createdAt: T0 + TTL }), newTask(scheduled, { createdAt: T0 + TTL, scheduledAt: T0 + TTL + 5 })]);

    const now = T0 + TTL + 10;
    expect(await a.claimTasks([early, late], 'wa', now, 1000, [oldEpoch, oldEpoch])).to.deep.equal([]);
    expect(await a.markPending([scheduled], now, oldEpoch)).to.deep.equal([]);
    const claimed = await b.claimTasks([early, late], 'wb', now, 1000, [newEpoch, newEpoch]);
    expect(claimed.map((t) => t.id).sort()).to.deep.equal([early, late].sort());
    expect(await b.markPending([scheduled], now, newEpoch)).to.deep.equal([scheduled]);
  });

  it('with no lease ever granted the task starts at epoch 0: any holder may claim it', async () => {
    const [id] = idsInPartition(5, 1, 'nolease');
    await a.insertTasks([newTask(id)]);
    const claimed = await b.claimTasks([id], 'wb', T0 + 1, 1000, [1]);
    expect(claimed.map((t) => t.id)).to.deep.equal([id]);
  });
});
