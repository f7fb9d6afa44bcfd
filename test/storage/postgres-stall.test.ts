/**
 * The PostgreSQL store when its writes are held by the database while the server answers (a
 * helper's `LOCK TABLE tasks IN ACCESS EXCLUSIVE MODE` kept `/readyz` at 200 for most of 90–150 s
 * while submissions waited 30–60 s): the connection watch reports the recoverable `stalled`
 * fault once a write transaction has run `writeStallMs`, so readiness says so, and ends it by
 * itself once the lock is gone; the held write then commits, nothing is lost. The same when reads
 * held by the lock take every connection of the pool and a call waits the connect timeout (5 s)
 * for one: its 503 names `stalled`, not `connection_lost` (which then flapped with each answered
 * read, and the watch's probe). Skipped without
 * POSTGRES_URL (failed in CI).
 */
import { expect } from 'chai';
import { Client } from 'pg';
import { StoreUnavailableError } from '../../src/domain/errors';
import { PostgresStore } from '../../src/storage/postgres/postgres-store';
import type { StoreFault } from '../../src/storage/store-health';
import { dropSchema, freshSchema, postgresUrl, registerMissingPostgres } from '../helpers/postgres-schema';
import { newTask, PARTITIONS } from './fixtures';

const url = postgresUrl();

describe('PostgresStore: writes held by a lock while the server answers', function () {
  this.timeout(30_000);
  if (!url) {
    registerMissingPostgres();
    return;
  }
  let schema: string;
  let store: PostgresStore;
  let locker: Client;

  /** Opens the store under test (a schema of its own) and the connection that will hold the lock. */
  async function open(writeStallMs: number): Promise<void> {
    schema = freshSchema('stall');
    store = new PostgresStore(url!, { schema, poolSize: 2, watchIntervalMs: 100, writeStallMs });
    await store.open(PARTITIONS);
    locker = new Client({ connectionString: url });
    await locker.connect();
  }

  afterEach(async () => {
    await locker.end().catch(() => undefined);
    await store.close();
    await dropSchema(url, schema);
  });

  /** The next fault change of the store's health (null: it ended). */
  const nextChange = () =>
    new Promise<StoreFault | null>((resolve) => {
      const off = store.health.onChange((fault) => {
        off();
        resolve(fault);
      });
    });

  it('reports stalled while a LOCK TABLE holds a write (writes queued behind it answer 503 at once), ends it when the lock goes, and the held write commits', async () => {
    await open(300);
    await store.insertTasks([newTask('before')]);
    await locker.query('BEGIN');
    await locker.query(`LOCK TABLE ${schema}.tasks IN ACCESS EXCLUSIVE MODE`);
    const stalled = nextChange();
    const held = store.insertTasks([newTask('held')]);
    const fault = await stalled;
    expect(fault).to.include({ kind: 'stalled', recoverable: true });
    expect(fault?.cause).to.match(/a write transaction has run \d+ s while the server answers/);
    expect(await store.ping(), 'the server still answers a SELECT 1').to.equal(true);
    // A write that would queue behind the held batch answers its 503 at once, not after 30 s.
    const behind = await store.insertTasks([newTask('behind')]).then(
      () => null,
      (e: unknown) => e,
    );
    expect(behind).to.be.instanceOf(StoreUnavailableError).and.to.have.nested.property('details.fault', 'stalled');

    const ended = nextChange();
    await locker.query('ROLLBACK');
    await held;
    expect(await ended).to.equal(null);
    expect(store.health.fault).to.equal(null);
    expect((await store.getTask('held'))?.id).to.equal('held');
    expect(await store.getTask('behind')).to.equal(null);
  });

  it('reports stalled when reads held by the lock use up the pool and a call waits the connect timeout; leases are still renewed; the waiting calls answer 503', async () => {
    await open(60_000); // only the pool's wait can report it here
    await locker.query('BEGIN');
    await locker.query(`LOCK TABLE ${schema}.tasks IN ACCESS EXCLUSIVE MODE`);
    const stalled = nextChange();
    // More reads than the pool has connections (2 + the two writers' places, none taken yet).
    const reads = Array.from({ length: 8 }, () =>
      store.getTask('missing').then(
        () => 'answered',
        (e: unknown) => e,
      ),
    );
    const fault = await stalled;
    expect(fault).to.include({ kind: 'stalled', recoverable: true });
    expect(fault?.cause).to.match(/every connection of the pool \(\d+\) is in use and a call waited 5 s/);
    // Lease writes have connections of their own: the node keeps its partitions meanwhile.
    const grant = await store.acquireLease(0, 'node-a', Date.now(), 15_000);
    expect(grant.granted).to.equal(true);
    if (grant.granted) expect(await store.renewLease(0, 'node-a', grant.lease.epoch, Date.now(), 15_000)).to.not.equal(null);
    expect(store.health.fault?.kind, 'a committed lease write does not end it').to.equal('stalled');

    const ended = nextChange();
    await locker.query('ROLLBACK');
    const outcomes = await Promise.all(reads);
    expect(await ended).to.equal(null);
    const refused = outcomes.filter((o) => o !== 'answered');
    expect(refused.length, 'some reads waited out the connect timeout').to.be.greaterThan(0);
    for (const r of refused) expect(r).to.be.instanceOf(StoreUnavailableError).and.to.have.nested.property('details.fault', 'stalled');
    expect(outcomes.filter((o) => o === 'answered').length, 'the reads holding connections answered').to.be.greaterThan(0);
  });
});
