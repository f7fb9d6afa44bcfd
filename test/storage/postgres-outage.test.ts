/**
 * The PostgreSQL store when its server goes away, on a private server this test stops, crashes and
 * freezes or makes read-only (test/helpers/private-postgres.ts; the shared POSTGRES_URL server is not touched): the
 * connection watch reports `connection_lost` with no call in flight and ends it by itself once
 * the server answers; the group-commit writer survives its idle connection being ended (no
 * unhandled 'error'), answers at once while the server is down, and after a freeze times out
 * instead of hanging; both make new connections afterwards. Once the fault has outlasted the watch's
 * probe bound, the store refuses writes at once.
 */
import { expect } from 'chai';
import { StoreUnavailableError } from '../../src/domain/errors';
import { openPool } from '../../src/storage/postgres/connection';
import { postgresFaultOf } from '../../src/storage/postgres/pg-faults';
import { PostgresStore } from '../../src/storage/postgres/postgres-store';
import { LOST_CONFIRMED_MS } from '../../src/storage/postgres/store-connections';
import { WriteQueue } from '../../src/storage/postgres/write-queue';
import { PrivatePostgres, startPrivatePostgres } from '../helpers/private-postgres';
import { newTask, T0 } from './fixtures';

/** Waits for `cond` (an event of the system under test), failing after `ms`. */
async function until(cond: () => boolean | Promise<boolean>, ms: number, what: string): Promise<number> {
  const t0 = Date.now();
  while (!(await cond())) {
    if (Date.now() - t0 > ms) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return Date.now() - t0;
}

describe('PostgreSQL store: the server goes away (private server)', function () {
  this.timeout(120_000);
  let pg: PrivatePostgres;
  const uncaught: unknown[] = [];
  const onUncaught = (err: unknown) => uncaught.push(err);

  before(async () => {
    pg = await startPrivatePostgres();
    process.on('uncaughtException', onUncaught);
  });
  after(() => {
    process.off('uncaughtException', onUncaught);
    pg?.remove();
  });
  afterEach(() => {
    expect(uncaught, 'uncaught errors').to.deep.equal([]);
  });

  for (const mode of ['fast', 'immediate'] as const) {
    it(`stopped (-m ${mode}) while idle: the watch reports connection_lost, and ends it by itself after the start`, async () => {
      const store = new PostgresStore(pg.url, { schema: `outage_${mode}`, poolSize: 3 });
      await store.open(4);
      try {
        expect(await store.ping()).to.equal(true);
        expect(store.health.fault).to.equal(null);
        const changes: Array<string | null> = [];
        store.health.onChange((f) => changes.push(f ? f.kind : null));
        await pg.stop(mode);
        const seenMs = await until(() => store.health.fault !== null, 5000, 'the fault');
        expect(store.health.fault).to.include({ kind: 'connection_lost', recoverable: true });
        expect(await store.ping()).to.equal(false);
        // Calls answer StoreUnavailableError at once (the port refuses connections).
        const t0 = Date.now();
        const err = await store.getTask('x').then(
          () => null,
          (e: unknown) => e,
        );
        expect((err as { code?: string }).code).to.equal('STORE_UNAVAILABLE');
        expect(Date.now() - t0).to.be.below(5000);
        await pg.start();
        const recoveredMs = await until(() => store.health.fault === null, 5000, 'the end of the fault');
        expect(await store.ping()).to.equal(true);
        expect(changes).to.deep.equal(['connection_lost', null]);
        console.log(
          `      -m ${mode}: fault seen ${seenMs} ms after pg_ctl stop returned; ended ${recoveredMs} ms after pg_ctl start returned`,
        );
      } finally {
        await store.close();
      }
    });
  }

  it('the writer: its idle connection ended by a shutdown is replaced; writes fail at once while down, succeed after the start', async () => {
    const pool = openPool(pg.url, { max: 2 });
    pool.on('error', () => undefined);
    const dropped: unknown[] = [];
    const q = new WriteQueue(pool, {
      isConnectionError: (e) => postgresFaultOf(e, 'pg', 0) !== null,
      onDropped: (e) => dropped.push(e),
    });
    const one = async () => (await q.run((db) => db.query<{ n: number }>('SELECT 1 AS n'))).rows[0].n;
    try {
      expect(await one()).to.equal(1); // the writer now holds an idle connection
      await pg.stop('fast');
      await until(() => dropped.length > 0, 5000, 'the writer to see its connection ended');
      const t0 = Date.now();
      const err = await one().then(
        () => null,
        (e: unknown) => e,
      );
      expect(postgresFaultOf(err, 'pg', 0), String(err)).to.not.equal(null);
      expect(Date.now() - t0).to.be.below(5000);
      await pg.start();
      expect(await one()).to.equal(1);
    } finally {
      await q.close();
      await pool.end();
    }
  });

  it('frozen (SIGSTOP): writes time out as connection_lost instead of hanging, the watch reports it; SIGCONT ends it', async () => {
    const store = new PostgresStore(pg.url, { schema: 'outage_frozen', poolSize: 3 });
    await store.open(4);
    const pool = openPool(pg.url, { max: 2, connectTimeoutMs: 1000 });
    pool.on('error', () => undefined);
    const q = new WriteQueue(pool, { isConnectionError: (e) => postgresFaultOf(e, 'pg', 0) !== null, statementTimeoutMs: 1000 });
    try {
      await q.run((db) => db.query('SELECT 1'));
      pg.signal('SIGSTOP');
      const t0 = Date.now();
      const err = await q
        .run((db) => db.query('SELECT 1'))
        .then(
          () => null,
          (e: unknown) => e,
        );
      const tookMs = Date.now() - t0;
      expect(String(err)).to.match(/Query read timeout/);
      expect(postgresFaultOf(err, 'pg', 0)).to.not.equal(null);
      expect(tookMs).to.be.below(10_000);
      const seenMs = await until(() => store.health.fault !== null, 10_000, 'the watch to report the frozen server');
      expect(store.health.fault?.kind).to.equal('connection_lost');
      pg.signal('SIGCONT');
      await until(() => store.health.fault === null, 10_000, 'the end of the fault');
      await q.run((db) => db.query('SELECT 1'));
      console.log(`      frozen: the write failed after ${tookMs} ms (statement timeout 1000 ms); the watch saw it in ${seenMs} ms`);
    } finally {
      pg.signal('SIGCONT');
      await q.close();
      await pool.end();
      await store.close();
    }
  });
  it('frozen (SIGSTOP) past the probe bound: writes answer 503 connection_lost at once instead of after a timeout; after SIGCONT they are taken again', async () => {
    const store = new PostgresStore(pg.url, { schema: 'outage_refused', poolSize: 3, watchIntervalMs: 200 });
    await store.open(4);
    try {
      await store.insertTasks([newTask('before')]);
      pg.signal('SIGSTOP');
      await until(() => store.health.fault?.kind === 'connection_lost', 15_000, 'the watch to report the frozen server');
      const since = store.health.fault!.since;
      await until(() => Date.now() - since >= LOST_CONFIRMED_MS, 5_000, 'the fault to outlast the probe bound');
      const t0 = Date.now();
      const refused = await store.insertTasks([newTask('refused')]).then(
        () => null,
        (e: unknown) => e,
      );
      const tookMs = Date.now() - t0;
      expect(refused).to.be.instanceOf(StoreUnavailableError).and.to.have.nested.property('details.fault', 'connection_lost');
      expect(tookMs, 'answered without waiting for the frozen server (statement timeout 30 s)').to.be.below(1000);
      pg.signal('SIGCONT');
      await until(() => store.health.fault === null, 15_000, 'the watch to end the fault');
      await store.insertTasks([newTask('after')]);
      expect((await store.getTask('after'))?.id).to.equal('after');
      expect(await store.getTask('refused')).to.equal(null);
    } finally {
      pg.signal('SIGCONT');
      await store.close();
    }
  });

  it('read-only (default_transaction_read_only on, as on a standby): writes 503 read_only, reads answer; a write ends it after the reset', async () => {
    const store = new PostgresStore(pg.url, { schema: 'outage_read_only', poolSize: 3 });
    await store.open(4);
    const admin = openPool(pg.url, { max: 1 });
    const setReadOnly = async (on: boolean) => {
      await admin.query(on ? 'ALTER SYSTEM SET default_transaction_read_only = on' : 'ALTER SYSTEM RESET default_transaction_read_only');
      await admin.query('SELECT pg_reload_conf()');
    };
    try {
      await store.insertTasks([newTask('ro-1', { state: 'PENDING', dueAt: T0 })]);
      await setReadOnly(true);
      // Every session reads the reloaded setting at its next statement: the writer's next transaction is refused.
      let err: unknown = null;
      let n = 2;
      await until(
        async () => {
          err = await store.insertTasks([newTask(`ro-${n++}`, { state: 'PENDING', dueAt: T0 })]).then(
            () => null,
            (e: unknown) => e,
          );
          return err !== null;
        },
        10_000,
        'a write to be refused',
      );
      // Before: the driver's DatabaseError (25006), a 500 INTERNAL_ERROR, and /readyz ready.
      expect((err as { code?: string }).code, String(err)).to.equal('STORE_UNAVAILABLE');
      expect((err as { details?: { fault?: string } }).details?.fault).to.equal('read_only');
      expect(store.health.fault).to.include({ kind: 'read_only', recoverable: true });
      expect((await store.getTask('ro-1'))?.state).to.equal('PENDING');
      expect(store.health.fault?.kind, 'a read does not end it').to.equal('read_only');
      await setReadOnly(false);
      await until(
        () =>
          store.insertTasks([newTask('ro-back', { state: 'PENDING', dueAt: T0 })]).then(
            () => true,
            () => false,
          ),
        10_000,
        'a write to succeed again',
      );
      expect(store.health.fault).to.equal(null);
      expect((await store.getTask('ro-back'))?.state).to.equal('PENDING');
    } finally {
      await setReadOnly(false).catch(() => undefined);
      await admin.end();
      await store.close();
    }
  });
});
