import { expect } from 'chai';
import type { Pool } from 'pg';
import type { Db } from '../../src/storage/postgres/db';
import { WriteQueue } from '../../src/storage/postgres/write-queue';
import { StoreContendedError } from '../../src/domain/errors';

/**
 * The PostgreSQL group commit takes the locks its operations declare all at once, right after
 * BEGIN and before any operation runs (`lockFirst`): two nodes' transactions that each complete
 * tasks of several workflows then lock those workflows in one order, instead of deadlocking (a
 * helper saw 8–13 deadlocks a run, each costing PostgreSQL's 1 s deadlock_timeout). A fake
 * connection records the statements.
 */
describe('PostgreSQL write queue: locks declared by a batch are taken first, together', () => {
  const statements: string[] = [];
  const client = {
    query: async (config: { text: string }) => {
      statements.push(config.text);
      return { rows: [], rowCount: 0 };
    },
    on: () => undefined,
    release: () => undefined,
  };
  const pool = { connect: async () => client } as unknown as Pool;
  const locked: string[][] = [];
  let failLock: Error | null = null;
  const queue = () =>
    new WriteQueue(pool, {
      isConnectionError: () => false,
      lockFirst: async (db: Db, keys: string[]) => {
        locked.push(keys);
        await db.query('LOCK');
        if (failLock) {
          const err = failLock;
          failLock = null;
          throw err;
        }
      },
    });
  beforeEach(() => {
    statements.length = 0;
    locked.length = 0;
  });

  it('one lock statement for the union of the batch, after BEGIN and before the first operation', async () => {
    const q = queue();
    const op = (name: string) => (db: Db) => db.query(name);
    await Promise.all([
      q.run(op('A'), 'first', undefined, ['t2', 't1']),
      q.run(op('B'), 'first'),
      q.run(op('C'), 'first', undefined, ['t1', 't3']),
    ]);
    expect(locked).to.deep.equal([['t2', 't1', 't3']]);
    expect(statements).to.deep.equal(['BEGIN', 'LOCK', 'A', 'B', 'C', 'COMMIT']);
    await q.close();
  });

  it('no lock statement when no operation declares one', async () => {
    const q = queue();
    await q.run((db) => db.query('A'), 'first');
    expect(locked).to.deep.equal([]);
    expect(statements).to.deep.equal(['BEGIN', 'A', 'COMMIT']);
    await q.close();
  });

  it('a deadlock while locking runs the batch again, as an operation deadlocked would be', async () => {
    const q = queue();
    failLock = Object.assign(new Error('deadlock detected'), { code: '40P01' });
    expect(await q.run(async (db) => (await db.query('A'), 'done'), 'first', undefined, ['t1'])).to.equal('done');
    expect(statements).to.deep.equal(['BEGIN', 'LOCK', 'ROLLBACK', 'BEGIN', 'LOCK', 'A', 'COMMIT']);
    await q.close();
  });

  it('a serialization failure at COMMIT (a SERIALIZABLE default) runs the whole batch again; after the retries, each caller gets it', async () => {
    let refuse = 1;
    const conflict = () => Object.assign(new Error('could not serialize access due to read/write dependencies'), { code: '40001' });
    const commitRefusing = {
      ...client,
      query: async (config: { text: string }) => {
        statements.push(config.text);
        if (config.text === 'COMMIT' && refuse-- > 0) throw conflict();
        return { rows: [], rowCount: 0 };
      },
    };
    const q = new WriteQueue({ connect: async () => commitRefusing } as unknown as Pool, {
      isConnectionError: () => false,
      conflictRetries: 2,
    });
    const op = (name: string) => async (db: Db) => (await db.query(name), name);
    expect(await Promise.all([q.run(op('A'), 'ordered'), q.run(op('B'), 'ordered')])).to.deep.equal(['A', 'B']);
    expect(statements).to.deep.equal(['BEGIN', 'A', 'B', 'COMMIT', 'BEGIN', 'A', 'B', 'COMMIT']);
    refuse = 3; // more than conflictRetries (2): the callers get a typed 503, never a hang nor the raw error
    const err = await q.run(op('C'), 'ordered').catch((e: unknown) => e);
    expect(err).to.be.instanceOf(StoreContendedError);
    expect(err).to.have.property('code', 'STORE_CONTENDED');
    expect((err as StoreContendedError).details).to.include({ tries: 3, retry_after_seconds: 1 });
    expect((err as StoreContendedError).details.cause).to.match(/^40001: could not serialize/);
    await q.close();
  });

  it('a statement refused for a deadlock on every try answers STORE_CONTENDED; the other writes of its batch still commit', async () => {
    const q = new WriteQueue({ connect: async () => client } as unknown as Pool, { isConnectionError: () => false, conflictRetries: 1 });
    const deadlock = async () => {
      throw Object.assign(new Error('deadlock detected'), { code: '40P01' });
    };
    const [lost, kept] = await Promise.all([
      q.run(deadlock, 'ordered').catch((e: unknown) => e),
      q.run(async (db) => (await db.query('B'), 'B'), 'ordered'),
    ]);
    expect(lost).to.be.instanceOf(StoreContendedError);
    expect((lost as StoreContendedError).details).to.include({ tries: 2, cause: '40P01: deadlock detected' });
    expect(kept).to.equal('B');
    await q.close();
  });
});
