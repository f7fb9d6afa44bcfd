/**
 * MongoStore's claims start their attempt when the write runs (issue 27's CI: on FerretDB under
 * load a claim waited 5–12 s in the write queue, longer than the 3 s lease, and was stored with a
 * lease already expired; the sweep then took live attempts for lost). Skipped without MONGODB_URI.
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { MongoStore } from '../../src/storage/mongo/mongo-store';
import { newTask, PARTITIONS, T0 } from './fixtures';

const uri = process.env.MONGODB_URI;
const LEASE_MS = 3000;

describe('MongoStore claims: the lease runs from the write, not from the call', () => {
  if (!uri) {
    it.skip('needs MONGODB_URI (a MongoDB or FerretDB server; `source .ci/services.sh` starts one)', () => undefined);
    return;
  }
  let database: string;
  let stores: MongoStore[];

  async function open(clock?: { now(): number }): Promise<MongoStore> {
    const s = new MongoStore(uri as string, { database, ...(clock ? { clock } : {}) });
    await s.open(PARTITIONS);
    stores.push(s);
    return s;
  }

  async function storedLease(id: string): Promise<{ started_at: number; lease_expires_at: number }> {
    const client = new MongoClient(uri as string);
    try {
      await client.connect();
      const d = await client
        .db(database)
        .collection('tasks')
        .findOne({ _id: id as never });
      return { started_at: d?.started_at, lease_expires_at: d?.lease_expires_at };
    } finally {
      await client.close();
    }
  }

  beforeEach(() => {
    database = `claimlease_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
    stores = [];
  });

  afterEach(async () => {
    const client = new MongoClient(uri as string);
    for (const s of stores) await s.close();
    await client.connect();
    await client.db(database).dropDatabase();
    await client.close();
  });

  it("with the scheduler clock past the caller's now (the claim waited), start and lease follow the clock", async () => {
    let clockNow = T0;
    const store = await open({ now: () => clockNow });
    await store.insertTasks([newTask('t1')]);
    clockNow = T0 + 7000; // the claim asked at T0 runs 7 s later
    const [claimed] = await store.claimTasks(['t1'], 'w1', T0, LEASE_MS);
    expect(claimed.startedAt).to.equal(T0 + 7000);
    expect(await storedLease('t1')).to.deep.equal({ started_at: T0 + 7000, lease_expires_at: T0 + 7000 + LEASE_MS });
    expect(await store.findExpiredLeases(T0 + 7000 + LEASE_MS - 1, 10)).to.deep.equal([]);
  });

  it("a clock behind the caller's now never shortens the lease; without a clock the lease runs from now", async () => {
    const behind = await open({ now: () => T0 - 60_000 });
    await behind.insertTasks([newTask('t2'), newTask('t3')]);
    await behind.claimTasks(['t2'], 'w1', T0, LEASE_MS);
    expect(await storedLease('t2')).to.deep.equal({ started_at: T0, lease_expires_at: T0 + LEASE_MS });
    const plain = await open();
    await plain.claimTasks(['t3'], 'w1', T0, LEASE_MS);
    expect(await storedLease('t3')).to.deep.equal({ started_at: T0, lease_expires_at: T0 + LEASE_MS });
  });
});
