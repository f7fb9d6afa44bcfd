/**
 * SQLite-specific: the aggregate reads (counts by state, waiting counts by tenant) run on their own
 * thread for file stores, and still see every write acknowledged before they were asked.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store';
import { openConnection } from '../../src/storage/sqlite/connection';
import { prepareAggregates } from '../../src/storage/sqlite/ops/aggregates';
import { ThreadAggregateReader } from '../../src/storage/sqlite/aggregate-reader';
import { newTask, PARTITIONS, T0 } from './fixtures';

/** The nice value of each thread of this process (Linux: /proc/self/task/<tid>/stat, field 19). */
function threadNices(): number[] {
  return fs.readdirSync('/proc/self/task').map((tid) => {
    const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  });
}

describe('SqliteStore aggregate reads (own thread)', () => {
  let dir: string;
  let store: SqliteStore;

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'store-aggregates-'));
    store = new SqliteStore(path.join(dir, 'scheduler.db'));
    await store.open(PARTITIONS);
  });

  afterEach(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('counts what was acknowledged before the call, even while an earlier count is running', async () => {
    await store.insertTasks([newTask('a-1'), newTask('a-2')]);
    const early = store.countByState(); // running on the aggregate thread
    await store.insertTasks([newTask('a-3')]);
    const late = store.countByState(); // asked after a-3's ack: must not get the running scan's answer
    const again = store.countByState(); // shares the follow-up scan with `late`
    expect((await early).PENDING).to.be.oneOf([2, 3]);
    expect((await late).PENDING).to.equal(3);
    expect((await again).PENDING).to.equal(3);
  });

  it('runs its thread at a lower priority (nice 10) than the event loop and the writer', async function () {
    if (process.platform !== 'linux') this.skip();
    await store.countByState(); // the thread starts at the first read
    expect(threadNices()).to.include(10);
    expect(os.getPriority()).to.equal(0);
  });

  it('counts by state exactly when the largest state changes between calls (it is the one counted as the difference)', async () => {
    await store.insertTasks(Array.from({ length: 5 }, (_, i) => newTask(`p-${i}`))); // PENDING largest
    await store.insertTasks(Array.from({ length: 2 }, (_, i) => newTask(`s-${i}`, { scheduledAt: T0 + 3_600_000 })));
    expect(await store.countByState()).to.include({ PENDING: 5, SCHEDULED: 2, RUNNING: 0 });
    await store.insertTasks(Array.from({ length: 7 }, (_, i) => newTask(`s2-${i}`, { scheduledAt: T0 + 3_600_000 })));
    expect(await store.countByState()).to.include({ PENDING: 5, SCHEDULED: 9 }); // SCHEDULED overtakes
    await store.insertTasks([newTask('p-last')]);
    const counts = await store.countByState();
    expect(counts).to.include({ PENDING: 6, SCHEDULED: 9 });
    expect(Object.values(counts).reduce((a, b) => a + b, 0)).to.equal(15);
  });

  it('counts a store wider than one window window by window, with the same answer as one snapshot', async () => {
    await store.insertTasks(Array.from({ length: 20 }, (_, i) => newTask(`p-${i}`)));
    await store.insertTasks(Array.from({ length: 9 }, (_, i) => newTask(`s-${i}`, { scheduledAt: T0 + 3_600_000 })));
    for (const id of ['p-0', 'p-5', 'p-11']) await store.cancelTask(id, T0);
    await store.insertTasks(Array.from({ length: 4 }, (_, i) => newTask(`q-${i}`)));
    const db = openConnection(path.join(dir, 'scheduler.db'), { fileMustExist: true });
    try {
      // Windows of 3 seqs (so 12 of them) and one window wider than the store.
      const windows = prepareAggregates(db, 3).countByState();
      expect(windows).to.deep.equal(prepareAggregates(db, 1_000).countByState());
      expect(windows).to.include({ PENDING: 21, SCHEDULED: 9, CANCELLED: 3 });
      expect(windows).to.deep.equal(await store.countByState());
    } finally {
      db.close();
    }
  });

  it('counts waiting tasks per tenant', async () => {
    await store.insertTasks([newTask('t-1', { tenantId: 'x' }), newTask('t-2', { tenantId: 'x' }), newTask('t-3', { tenantId: 'y' })]);
    expect(await store.countWaitingByTenant()).to.deep.equal({ x: 2, y: 1 });
  });

  it('checkpoints the WAL from a thread of its own at normal priority, beside the niced scans', async function () {
    if (process.platform !== 'linux') this.skip();
    const threads = fs.readdirSync('/proc/self/task').length;
    await store.checkpoint(); // the checkpoint thread starts at the first checkpoint
    expect(fs.readdirSync('/proc/self/task').length).to.be.greaterThan(threads);
    expect(threadNices()).to.not.include(10); // not the scans' thread, which has not started
    await store.countByState();
    expect(threadNices()).to.include(10);
  });

  it('checkpoints the WAL from its own connection while the writer goes on (PASSIVE)', async () => {
    const wal = path.join(dir, 'scheduler.db-wal');
    await store.insertTasks(Array.from({ length: 500 }, (_, i) => newTask(`w-${i}`)));
    const before = fs.statSync(wal).size;
    const [, inserted] = await Promise.all([store.checkpoint(), store.insertTasks([newTask('during')])]);
    expect(inserted[0].taskId).to.equal('during');
    await store.checkpoint();
    // Checkpointed pages are reused from the start of the WAL: it stops growing.
    await store.insertTasks(Array.from({ length: 500 }, (_, i) => newTask(`x-${i}`)));
    expect(fs.statSync(wal).size).to.be.at.most(before * 1.5);
    expect((await store.countByState()).PENDING).to.equal(1001);
  });

  it('starts a new thread at the next request after its thread exited (checkpoints and counts go on)', async () => {
    const file = path.join(dir, 'later.db');
    const reader = new ThreadAggregateReader(file); // no file yet: the thread cannot open it and exits
    let refused: unknown = null;
    await reader.checkpoint().catch((err: unknown) => (refused = err));
    expect(refused).to.not.equal(null);
    const later = new SqliteStore(file);
    await later.open(PARTITIONS);
    try {
      await later.insertTasks([newTask('one')]);
      await reader.checkpoint();
      expect((await reader.countByState()).PENDING).to.equal(1);
    } finally {
      await reader.close();
      await later.close();
    }
  });

  it('refuses counts after close', async () => {
    await store.countByState();
    await store.close();
    await store.countByState().then(
      () => expect.fail('a closed store must refuse'),
      (err: Error) => expect(err.message).to.match(/not open/),
    );
  });
});
