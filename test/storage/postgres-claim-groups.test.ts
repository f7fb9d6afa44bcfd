/**
 * The PostgreSQL store gathers the claims queued while a transaction commits and writes them in
 * the same statements (src/storage/postgres/claim-groups.ts). Each caller must still get exactly
 * its own claim: its ids, its worker, its lease, in its input order; an id named by two claims of
 * one group goes to the first; an empty or all-refused claim answers []. Skipped without
 * POSTGRES_URL (failed in CI).
 */
import { expect } from 'chai';
import { Client } from 'pg';
import { PostgresStore } from '../../src/storage/postgres/postgres-store';
import { dropSchema, freshSchema, postgresUrl, registerMissingPostgres } from '../helpers/postgres-schema';
import { newTask, PARTITIONS, T0 } from './fixtures';

const url = postgresUrl();

describe('PostgresStore: claims gathered per group commit', () => {
  if (!url) {
    registerMissingPostgres();
    return;
  }
  let schema: string;
  let store: PostgresStore;

  beforeEach(async () => {
    schema = freshSchema('claimgroups');
    store = new PostgresStore(url, { schema });
    await store.open(PARTITIONS);
  });

  afterEach(async () => {
    await store.close();
    await dropSchema(url, schema);
  });

  it('claims sent together: each caller gets its own ids, worker and lease, in its order; a shared id goes to the first', async () => {
    const ids = Array.from({ length: 400 }, (_, i) => `t-${String(i).padStart(3, '0')}`);
    await store.insertTasks(ids.map((id) => newTask(id, { state: 'PENDING', dueAt: T0 })));
    // Reversed and interleaved orders, one id shared by claims 0 and 2, a claim of unknown ids, an empty claim.
    const requests = [
      { ids: ids.slice(0, 150).reverse(), worker: 'w0', lease: 1000 },
      { ids: ids.slice(150, 300), worker: 'w1', lease: 2000 },
      { ids: [ids[10], ...ids.slice(300, 400)], worker: 'w2', lease: 3000 },
      { ids: ['missing-1', 'missing-2'], worker: 'w3', lease: 4000 },
      { ids: [] as string[], worker: 'w4', lease: 5000 },
    ];
    const answers = await Promise.all(requests.map((r) => store.claimTasks(r.ids, r.worker, T0 + 5, r.lease)));
    expect(answers[0].map((t) => t.id)).to.deep.equal(requests[0].ids);
    expect(answers[1].map((t) => t.id)).to.deep.equal(requests[1].ids);
    expect(answers[2].map((t) => t.id)).to.deep.equal(ids.slice(300, 400));
    expect(answers[3]).to.deep.equal([]);
    expect(answers[4]).to.deep.equal([]);
    for (const t of answers.flat()) expect(t.attempt).to.equal(1);
    const db = new Client({ connectionString: url });
    await db.connect();
    try {
      const { rows } = await db.query<{ id: string; state: string; worker_id: string; lease: string }>(
        `SELECT id, state, worker_id, lease_expires_at - started_at AS lease FROM ${schema}.tasks`,
      );
      const byId = new Map(rows.map((r) => [r.id, r]));
      for (const [k, r] of requests.slice(0, 3).entries()) {
        for (const t of answers[k]) {
          const row = byId.get(t.id);
          expect(row?.state, t.id).to.equal('RUNNING');
          expect(row?.worker_id, t.id).to.equal(r.worker);
          expect(Number(row?.lease), t.id).to.equal(r.lease);
        }
      }
      expect(rows.filter((r) => r.state === 'RUNNING')).to.have.length(400);
    } finally {
      await db.end();
    }
  });

  it('a claim at a fractional millisecond (the Redis offset clock) stores whole ms: start rounded down, lease end up', async () => {
    await store.insertTasks([newTask('f', { state: 'PENDING', dueAt: T0 })]);
    const [t] = await store.claimTasks(['f'], 'w0', T0 + 5.6, 1000);
    expect(t.startedAt).to.equal(T0 + 5);
    const db = new Client({ connectionString: url });
    await db.connect();
    try {
      const { rows } = await db.query<{ started_at: string; lease_expires_at: string }>(
        `SELECT started_at, lease_expires_at FROM ${schema}.tasks WHERE id = 'f'`,
      );
      expect(rows.map((r) => [Number(r.started_at), Number(r.lease_expires_at)])).to.deep.equal([[T0 + 5, T0 + 1006]]);
    } finally {
      await db.end();
    }
  });

  it('a group whose write fails without running answers each caller with the error; the next claims form a new group', async () => {
    await store.insertTasks([newTask('a', { state: 'PENDING', dueAt: T0 }), newTask('b', { state: 'PENDING', dueAt: T0 })]);
    const closed = new PostgresStore(url, { schema });
    const failed = await Promise.allSettled([closed.claimTasks(['a'], 'w0', T0 + 5, 1000), closed.claimTasks(['b'], 'w1', T0 + 5, 1000)]);
    expect(failed.map((f) => f.status)).to.deep.equal(['rejected', 'rejected']);
    await closed.open(PARTITIONS);
    try {
      const answers = await Promise.all([closed.claimTasks(['a'], 'w0', T0 + 5, 1000), closed.claimTasks(['b'], 'w1', T0 + 5, 1000)]);
      expect(answers.map((a) => a.map((t) => t.id))).to.deep.equal([['a'], ['b']]);
    } finally {
      await closed.close();
    }
  });
});
