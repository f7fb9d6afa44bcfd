/**
 * The PostgreSQL store at start-up and under the role's own settings: a wrong database or an
 * unreachable server is one line (exit 78 or 69), not a stack trace; a role whose
 * `statement_timeout` is tiny, and a role with rights on the tables alone (a database already
 * migrated), can open the store; a privilege revoked under the running store is a 503. Runs on the server of POSTGRES_URL (trust authentication: roles
 * made here log in without a password).
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { StoreConfigError, StoreUnreachableError } from '../../src/storage/store';
import { PostgresStore } from '../../src/storage/postgres/postgres-store';
import { dropSchema, freshSchema, postgresUrl, registerMissingPostgres } from '../helpers/postgres-schema';
import { newTask, T0 } from './fixtures';

const url = postgresUrl();

/** `url` with its user replaced by `user` (trust authentication: no password). */
function asUser(base: string, user: string): string {
  const u = new URL(base);
  u.username = user;
  u.password = '';
  return u.toString();
}

async function admin<T>(fn: (c: Client) => Promise<T>): Promise<T> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

describe('PostgresStore: start-up errors and the role’s own settings', function () {
  if (!url) {
    registerMissingPostgres();
    return;
  }
  this.timeout(60_000);
  const roles: string[] = [];
  const schemas: string[] = [];
  after(async () => {
    for (const s of schemas) await dropSchema(url, s);
    await admin(async (c) => {
      for (const r of roles) {
        await c.query(`DROP OWNED BY ${r}`).catch(() => undefined);
        await c.query(`DROP ROLE IF EXISTS ${r}`);
      }
    });
  });

  /** A new login role (dropped after the suite). */
  async function role(prefix: string): Promise<string> {
    const name = `${prefix}_${randomUUID().replace(/-/g, '').slice(0, 10)}`;
    roles.push(name);
    await admin((c) => c.query(`CREATE ROLE ${name} LOGIN`));
    return name;
  }

  /**
   * A store migrated by the admin role in a fresh schema, opened by a new role with the rights the
   * docs name for running nodes (USAGE on the schema, DML on its tables, its sequences).
   */
  async function narrowStore(prefix: string): Promise<{ schema: string; name: string; store: PostgresStore }> {
    const server = url as string; // set: the suite returned early otherwise
    const schema = freshSchema(prefix);
    schemas.push(schema);
    const first = new PostgresStore(server, { schema });
    await first.open(4);
    await first.close();
    const name = await role(prefix);
    await admin(async (c) => {
      await c.query(`GRANT USAGE ON SCHEMA ${schema} TO ${name}`);
      await c.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${schema} TO ${name}`);
      await c.query(`GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA ${schema} TO ${name}`);
    });
    const store = new PostgresStore(asUser(server, name), { schema });
    await store.open(4);
    return { schema, name, store };
  }

  async function openError(store: PostgresStore): Promise<unknown> {
    try {
      await store.open(4);
    } catch (err) {
      return err;
    } finally {
      await store.close().catch(() => undefined);
    }
    return null;
  }

  it('a database that does not exist: StoreConfigError (exit 78) naming POSTGRES_URL and the database, one line', async () => {
    const u = new URL(url);
    u.pathname = '/no_such_db_here';
    const err = await openError(new PostgresStore(u.toString(), { schema: 'public' }));
    expect(err).to.be.instanceOf(StoreConfigError);
    expect((err as StoreConfigError).exitCode).to.equal(78);
    expect((err as Error).message).to.match(/^invalid configuration: postgresUrl \(env POSTGRES_URL\): .*no_such_db_here.*does not exist/);
    expect((err as Error).message).to.not.include('\n');
  });

  it('a server that cannot be reached: StoreUnreachableError (exit 69), one line naming it', async () => {
    const u = new URL(url);
    u.port = '1';
    const err = await openError(new PostgresStore(u.toString(), { schema: 'public' }));
    expect(err).to.be.instanceOf(StoreUnreachableError);
    expect((err as StoreUnreachableError).exitCode).to.equal(69);
    expect((err as Error).message).to.match(/^the PostgreSQL server postgres:\/\/127\.0\.0\.1:1\/.* cannot be reached: .*ECONNREFUSED/);
  });

  it('a server that takes no writes (a standby, default_transaction_read_only): StoreUnreachableError (exit 69), one line', async () => {
    const name = await role('readonly');
    const schema = freshSchema('readonly');
    schemas.push(schema);
    await admin(async (c) => {
      const db = new URL(url).pathname.slice(1);
      await c.query(`GRANT CREATE ON DATABASE ${db} TO ${name}`);
      await c.query(`ALTER ROLE ${name} SET default_transaction_read_only = on`);
    });
    // Before: the driver's "cannot execute CREATE SCHEMA in a read-only transaction" with its
    // stack, exit 1.
    const err = await openError(new PostgresStore(asUser(url, name), { schema }));
    expect(err).to.be.instanceOf(StoreUnreachableError);
    expect((err as StoreUnreachableError).exitCode).to.equal(69);
    expect((err as Error).message).to.match(
      /^the PostgreSQL server .* takes no writes \(a hot standby, or default_transaction_read_only on\): 25006: /,
    );
    expect((err as Error).message).to.not.include('\n');
  });

  it("a role whose statement_timeout is 1 ms opens the store and writes (the store's own 30 s bound wins)", async () => {
    const name = await role('tinyto');
    const schema = freshSchema('tinyto');
    schemas.push(schema);
    await admin(async (c) => {
      const db = new URL(url).pathname.slice(1);
      await c.query(`GRANT CREATE ON DATABASE ${db} TO ${name}`);
      await c.query(`ALTER ROLE ${name} SET statement_timeout = '1ms'`);
    });
    const store = new PostgresStore(asUser(url, name), { schema });
    await store.open(4); // before: "canceling statement due to statement timeout" at the migration
    try {
      await store.insertTasks(Array.from({ length: 200 }, (_, i) => newTask(`to-${i}`, { state: 'PENDING', dueAt: T0 })));
      expect((await store.countByState()).PENDING).to.equal(200);
    } finally {
      await store.close();
    }
  });

  it("a role whose lock_timeout is 1 ms migrates, and its writes wait for a row another session holds (the store's own bound wins)", async () => {
    const name = await role('tinylock');
    const schema = freshSchema('tinylock');
    schemas.push(schema);
    await admin(async (c) => {
      const db = new URL(url).pathname.slice(1);
      await c.query(`GRANT CREATE ON DATABASE ${db} TO ${name}`);
      await c.query(`ALTER ROLE ${name} SET lock_timeout = '1ms'`);
    });
    const store = new PostgresStore(asUser(url, name), { schema });
    await store.open(4);
    const holder = new Client({ connectionString: url });
    const watcher = new Client({ connectionString: url });
    await holder.connect();
    await watcher.connect();
    try {
      await store.insertTasks([newTask('lk-1', { state: 'PENDING', dueAt: T0 })]);
      // Another session (another node's transaction, an operator's) holds the task's row.
      await holder.query('BEGIN');
      await holder.query(`SELECT id FROM ${schema}.tasks WHERE id = 'lk-1' FOR UPDATE`);
      let settled = false;
      const cancel = store.cancelTask('lk-1', T0 + 1).then(
        (r) => r,
        (e: unknown) => e,
      );
      void cancel.then(() => (settled = true));
      // The cancel either waits for the lock (seen in pg_locks) or, before the fix, fails at once
      // with 55P03 "canceling statement due to lock timeout".
      const waiting = async () =>
        (await watcher.query(`SELECT 1 FROM pg_stat_activity WHERE usename = $1 AND wait_event_type = 'Lock'`, [name])).rowCount! > 0;
      const t0 = Date.now();
      while (!settled && !(await waiting())) {
        if (Date.now() - t0 > 10_000) throw new Error('the cancel neither waited for the lock nor settled');
        await new Promise((r) => setImmediate(r));
      }
      await holder.query('COMMIT');
      const result = await cancel;
      expect(result, String(result)).to.deep.include({ kind: 'cancelled' });
      expect((await store.getTask('lk-1'))?.state).to.equal('CANCELLED');
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
      await watcher.end();
      await store.close();
    }
  });

  it('a role with rights on the tables alone opens a store already migrated (it needed CREATE on the database)', async () => {
    const schema = freshSchema('tables');
    schemas.push(schema);
    const first = new PostgresStore(url, { schema });
    await first.open(4);
    await first.close();
    const name = await role('tablesonly');
    await admin(async (c) => {
      await c.query(`GRANT USAGE ON SCHEMA ${schema} TO ${name}`);
      await c.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${schema} TO ${name}`);
      await c.query(`GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA ${schema} TO ${name}`);
    });
    const store = new PostgresStore(asUser(url, name), { schema });
    await store.open(4); // before: "permission denied for database"
    try {
      await store.insertTasks([newTask('tbl-1', { state: 'PENDING', dueAt: T0 })]);
      expect((await store.getTask('tbl-1'))?.state).to.equal('PENDING');
    } finally {
      await store.close();
    }
    // Without rights to migrate a fresh schema, it is one line naming POSTGRES_URL (exit 78).
    const err = await openError(new PostgresStore(asUser(url, name), { schema: freshSchema('denied') }));
    expect(err).to.be.instanceOf(StoreConfigError);
    expect((err as Error).message).to.match(/^invalid configuration: postgresUrl \(env POSTGRES_URL\): .*permission denied/);
  });
  it('a privilege revoked under the running store: 503 permission_denied (not a 500) until it is granted back', async () => {
    const { schema, name, store } = await narrowStore('revoked');
    try {
      await store.insertTasks([newTask('rv-1', { state: 'PENDING', dueAt: T0 })]);
      await admin((c) => c.query(`REVOKE INSERT ON ${schema}.tasks FROM ${name}`));
      const err = await store.insertTasks([newTask('rv-2', { state: 'PENDING', dueAt: T0 })]).then(
        () => null,
        (e: unknown) => e,
      );
      // Before: the driver's "permission denied for table tasks" (42501), a 500 INTERNAL_ERROR.
      expect((err as { code?: string }).code, String(err)).to.equal('STORE_UNAVAILABLE');
      expect((err as { details?: { fault?: string; cause?: string } }).details).to.include({ fault: 'permission_denied' });
      expect((err as { details: { cause: string } }).details.cause).to.match(/^42501: permission denied for table tasks/);
      expect(store.health.fault).to.include({ kind: 'permission_denied', recoverable: true });
      expect((await store.getTask('rv-1'))?.state).to.equal('PENDING');
      await admin((c) => c.query(`GRANT INSERT ON ${schema}.tasks TO ${name}`));
      await store.insertTasks([newTask('rv-3', { state: 'PENDING', dueAt: T0 })]);
      expect(store.health.fault).to.equal(null);
      expect(await store.getTask('rv-2')).to.equal(null);
    } finally {
      await store.close();
    }
  });

  it('USAGE on the schema revoked under the running store: 503 permission_denied, recoverable (its 42P01 is not tables_missing), until granted back', async () => {
    const { schema, name, store } = await narrowStore('hidden');
    try {
      await store.insertTasks([newTask('hd-1', { state: 'PENDING', dueAt: T0 })]);
      await admin((c) => c.query(`REVOKE USAGE ON SCHEMA ${schema} FROM ${name}`));
      const err = await store.insertTasks([newTask('hd-2', { state: 'PENDING', dueAt: T0 })]).then(
        () => null,
        (e: unknown) => e,
      );
      // Before: tables_missing, not recoverable: every call 503 until a restart, and the completions
      // kept in memory lost at that stop (their tasks ran twice).
      expect((err as { code?: string }).code, String(err)).to.equal('STORE_UNAVAILABLE');
      expect((err as { details?: { fault?: string; recoverable?: boolean } }).details).to.include({
        fault: 'permission_denied',
        recoverable: true,
      });
      expect((err as { details: { cause: string } }).details.cause).to.match(
        /^42P01: relation "\w+" does not exist \(it exists in schema /,
      );
      await admin((c) => c.query(`GRANT USAGE ON SCHEMA ${schema} TO ${name}`));
      await store.insertTasks([newTask('hd-3', { state: 'PENDING', dueAt: T0 })]);
      expect(store.health.fault).to.equal(null);
      expect((await store.getTask('hd-1'))?.state).to.equal('PENDING');
      expect(await store.getTask('hd-2')).to.equal(null);
    } finally {
      await store.close();
    }
  });
});
