/**
 * The store's connections bound a transaction left idle by its client (PostgreSQL's
 * `idle_in_transaction_session_timeout`, src/storage/postgres/connection.ts): a node cut off from
 * the server in the middle of a group-commit transaction (test/chaos/postgres-partition.test.ts)
 * must not hold its row locks until TCP notices, which would stall every other node's writes of
 * those rows and the fence of each partition they take over. Here a client that goes silent after
 * locking a row stands for the cut node. Skipped without POSTGRES_URL.
 */
import { expect } from 'chai';
import type { PoolClient } from 'pg';
import { IDLE_IN_TRANSACTION_TIMEOUT_MS, openPool } from '../../src/storage/postgres/connection';
import { dropSchema, freshSchema, postgresUrl, withClient } from '../helpers/postgres-schema';

const url = postgresUrl();

describe('PostgreSQL store: a transaction its client left idle is ended by the server', function () {
  this.timeout(30_000);
  if (!url) {
    it.skip('needs POSTGRES_URL (`source .ci/services.sh` starts a private PostgreSQL)', () => undefined);
    return;
  }
  const schema = freshSchema('idle');

  before(async () => {
    await withClient(url, 'public', (c) => c.query(`CREATE SCHEMA ${schema}`));
    await withClient(url, schema, (c) => c.query('CREATE TABLE t (id int PRIMARY KEY, v int NOT NULL); INSERT INTO t VALUES (1, 0)'));
  });
  after(async () => {
    await dropSchema(url, schema);
  });

  it(`the default bound is ${IDLE_IN_TRANSACTION_TIMEOUT_MS} ms on every connection`, async () => {
    const pool = openPool(url, { schema, max: 1 });
    try {
      const { rows } = await pool.query<{ ms: string }>(
        "SELECT setting AS ms FROM pg_settings WHERE name = 'idle_in_transaction_session_timeout'",
      );
      expect(Number(rows[0].ms)).to.equal(IDLE_IN_TRANSACTION_TIMEOUT_MS);
    } finally {
      await pool.end();
    }
  });

  it("a silent client's row lock is released: the other writer goes on, the silent session is ended", async () => {
    const pool = openPool(url, { schema, max: 2, idleInTransactionTimeoutMs: 300 });
    const silent: PoolClient = await pool.connect();
    // The server's FATAL, then possibly the driver's own "terminated" for the same end: keep listening.
    const errors: (Error & { code?: string })[] = [];
    const ended = new Promise<void>((resolve) =>
      silent.on('error', (err) => {
        errors.push(err);
        resolve();
      }),
    );
    try {
      await silent.query('BEGIN');
      await silent.query('SELECT v FROM t WHERE id = 1 FOR UPDATE');
      // The silent client sends nothing more (its peer cut off); the other writer waits for the row.
      const started = Date.now();
      const { rowCount } = await pool.query('UPDATE t SET v = v + 1 WHERE id = 1');
      const waitedMs = Date.now() - started;
      expect(rowCount).to.equal(1);
      expect(waitedMs, 'the other writer waited for the lock').to.be.at.least(200);
      await ended;
      expect(errors[0].code ?? errors[0].message).to.match(/25P03|idle-in-transaction|terminat/i);
    } finally {
      silent.release(true);
      await pool.end();
    }
  });
});
