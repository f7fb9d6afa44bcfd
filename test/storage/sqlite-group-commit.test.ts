/**
 * SQLite-specific: group commit (DESIGN §9). Concurrent writes issued in the same tick share one
 * transaction; every caller is answered after the commit; one failing operation rejects only its
 * own caller.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sqliteDatabaseClass, SqliteDatabase } from '../../src/storage/sqlite/driver';
import { GroupCommit } from '../../src/storage/sqlite/group-commit';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store';
import { acks, newTask, PARTITIONS, T0 } from './fixtures';

for (const writerThread of [true, false])
  describe(`SqliteStore group commit (${writerThread ? 'writer thread' : 'in-process writer'})`, () => {
    let dir: string;
    let file: string;
    let store: SqliteStore;

    beforeEach(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'store-group-commit-'));
      file = path.join(dir, 'scheduler.db');
      store = new SqliteStore(file, { writerThread });
      await store.open(PARTITIONS);
    });

    afterEach(async () => {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    async function stats() {
      const s = await store.commitStats();
      if (!s) throw new Error('commitStats() is null on an open store');
      return { ...s };
    }

    it('a due mark and a claim of the same task, queued together: the claim goes first (deferred lane) and wins', async () => {
      await store.insertTasks([newTask('gc-due', { scheduledAt: T0 + 10 })]);
      const [marked, claimed] = await Promise.all([
        store.markPending(['gc-due'], T0 + 10),
        store.claimTasks(['gc-due'], 'w', T0 + 10, 1000),
      ]);
      expect(claimed.map((c) => c.id)).to.deep.equal(['gc-due']);
      // In-process both share one transaction, the claim first; the writer thread may commit the
      // mark before the claim has reached it. Either way the claim wins.
      if (!writerThread) expect(marked).to.deep.equal([]);
      expect((await store.getTask('gc-due'))!.state).to.equal('RUNNING');
    });

    it('batches 200 concurrent insertTasks calls into far fewer commits, all resolved', async () => {
      const before = await stats();
      const calls = Array.from({ length: 200 }, (_, i) => store.insertTasks([newTask(`gc-${i}`, { createdAt: T0 + i })]));
      const settled = await Promise.allSettled(calls);
      expect(settled.filter((s) => s.status === 'rejected')).to.have.length(0);

      const after = await stats();
      const commits = after.commits - before.commits;
      expect(after.operations - before.operations).to.equal(200);
      expect(commits).to.be.at.least(1);
      expect(commits).to.be.at.most(10); // far fewer than 200
      expect(after.largestBatch).to.be.at.least(20);

      const counts = await store.countByState();
      expect(counts.PENDING).to.equal(200);
      for (let i = 0; i < 200; i += 37) expect((await store.getTask(`gc-${i}`))?.id).to.equal(`gc-${i}`);
    });

    it('answers a caller only after its batch is committed (visible to a fresh connection)', async () => {
      await Promise.all(Array.from({ length: 50 }, (_, i) => store.insertTasks([newTask(`vis-${i}`)])));
      const reader = new SqliteStore(file);
      await reader.open(PARTITIONS);
      try {
        expect((await reader.countByState()).PENDING).to.equal(50);
      } finally {
        await reader.close();
      }
    });

    it('rejects only the caller whose operation fails; the others in the batch commit', async () => {
      await store.insertTasks([newTask('taken')]);
      const before = await stats();

      const calls = Array.from({ length: 200 }, (_, i) =>
        i === 100
          ? // A duplicate of a stored id, in a list with a valid task: the whole list must roll back.
            store.insertTasks([newTask('bad-companion'), newTask('taken', { payload: 'overwrite?' })])
          : store.insertTasks([newTask(`ok-${i}`)]),
      );
      const settled = await Promise.allSettled(calls);

      const rejected = settled.map((s, i) => [s.status, i] as const).filter(([s]) => s === 'rejected');
      expect(rejected.map(([, i]) => i)).to.deep.equal([100]);
      expect((settled[100] as PromiseRejectedResult).reason).to.be.instanceOf(Error);

      const after = await stats();
      expect(after.commits - before.commits).to.be.at.most(10);
      expect(await store.getTask('bad-companion')).to.equal(null);
      expect((await store.getTask('taken'))?.payload).to.deep.equal({ n: 1 });
      expect((await store.countByState()).PENDING).to.equal(200); // 'taken' + 199 ok-*
      for (let i = 0; i < 200; i++) {
        if (i !== 100) expect(await store.getTask(`ok-${i}`), `ok-${i}`).to.not.equal(null);
      }
    });

    it('isolates a duplicate inside the same batch: the first insert of the id wins', async () => {
      const calls = [
        store.insertTasks([newTask('same', { payload: 'first' })]),
        store.insertTasks([newTask('same', { payload: 'second' })]),
        store.insertTasks([newTask('other')]),
      ];
      const settled = await Promise.allSettled(calls);
      expect(settled.map((s) => s.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled']);
      expect((await store.getTask('same'))?.payload).to.equal('first');
      expect(await store.getTask('other')).to.not.equal(null);
    });

    it('mixes different write operations in one batch', async () => {
      await store.insertTasks([newTask('mix-1'), newTask('mix-2')]);
      const before = await stats();
      const [ins, claim, cancel] = await Promise.all([
        store.insertTasks([newTask('mix-3')]),
        store.claimTasks(['mix-1'], 'w', T0 + 1, 1000),
        store.cancelTask('mix-2', T0 + 1),
      ]);
      expect(acks(ins)).to.deep.equal([{ taskId: 'mix-3', replayed: false }]);
      expect(claim.map((c) => c.id)).to.deep.equal(['mix-1']);
      expect(cancel.kind).to.equal('cancelled');
      // In process the three share one transaction; across the thread boundary messages may arrive
      // in more than one turn of the writer's event loop.
      expect((await stats()).commits - before.commits).to.be.at.most(writerThread ? 3 : 1);
    });
  });

describe('GroupCommit bulk lane', () => {
  let db: SqliteDatabase;
  let commit: GroupCommit;
  const commitsSeen: number[] = [];

  beforeEach(() => {
    db = new (sqliteDatabaseClass())(':memory:');
    db.exec('CREATE TABLE t (k TEXT)');
    commit = new GroupCommit(db, { bulkRows: 32, bulkRowsPerCommit: 1000 });
    commitsSeen.length = 0;
  });

  afterEach(() => db.close());

  /** An operation that records which transaction (commit number) it ran in. */
  const op = (k: string) => () => {
    db.prepare('INSERT INTO t VALUES (?)').run(k);
    commitsSeen.push(commit.stats.commits);
    return commit.stats.commits;
  };

  it('keeps savepoint sub-journals in memory (temp_store = MEMORY): no temporary file per operation', () => {
    expect(db.pragma('temp_store', { simple: true })).to.equal(2);
  });

  it('deferred operations (due marks) take one 256-row slice at the end of each transaction: nothing queued after 40 of them waits', async () => {
    const deferred = Array.from({ length: 40 }, (_, i) => commit.run(op(`mark-${i}`), 256, true));
    const bulk = commit.run(op('batch'), 100);
    const small = commit.run(op('single'), 1);
    const [marksIn, bulkIn, smallIn] = await Promise.all([Promise.all(deferred), bulk, small]);
    expect([smallIn, bulkIn]).to.deep.equal([0, 0]);
    expect(marksIn).to.deep.equal(Array.from({ length: 40 }, (_, i) => i)); // one slice per transaction, in order
    expect(commitsSeen.slice(0, 3)).to.deep.equal([0, 0, 0]); // single, batch, then the first slice
  });

  it('commits small operations ahead of queued bulk ones, one bulk slice per transaction', async () => {
    const bulk = Array.from({ length: 4 }, (_, i) => commit.run(op(`bulk-${i}`), 1000));
    const small = commit.run(op('single'), 1);
    const late = new Promise<number>((resolve) => setImmediate(() => resolve(commit.run(op('late'), 1))));
    const [bulkIn, smallIn, lateIn] = await Promise.all([Promise.all(bulk), small, late]);
    // Transaction 0: the small one and the first bulk slice. An operation queued meanwhile gets the
    // next transaction to itself (no bulk slice twice in a row while small ones wait); then one
    // slice per transaction.
    expect(smallIn).to.equal(0);
    expect(lateIn).to.equal(1);
    expect(bulkIn).to.deep.equal([0, 2, 3, 4]);
    expect(commit.stats.commits).to.equal(5);
    expect((db.prepare('SELECT COUNT(*) AS n FROM t').get() as { n: number }).n).to.equal(6);
  });

  it('puts several small bulk operations in one transaction up to the row budget', async () => {
    const ins = await Promise.all(Array.from({ length: 6 }, (_, i) => commit.run(op(`b-${i}`), 400)));
    expect(ins).to.deep.equal([0, 0, 1, 1, 2, 2]);
  });

  it('close() commits everything still queued, bulk included', async () => {
    const all = Promise.all(Array.from({ length: 3 }, (_, i) => commit.run(op(`c-${i}`), 1000)));
    commit.close();
    expect(await all).to.deep.equal([0, 1, 2]);
    await commit.run(op('after'), 1).then(
      () => expect.fail('a closed group commit must refuse work'),
      (err: Error) => expect(err.message).to.match(/closed/),
    );
  });
});

describe('GroupCommit afterCommit (the check that the file committed to is still the store)', () => {
  it('an afterCommit that throws makes every caller of the batch get its error, never a result', async () => {
    const db = new (sqliteDatabaseClass())(':memory:');
    db.exec('CREATE TABLE t (k TEXT)');
    let moved = false;
    const commit = new GroupCommit(db, {
      afterCommit: () => {
        if (moved) throw Object.assign(new Error('the database file was deleted'), { code: 'SCHEDULER_STORE_FILE_MOVED' });
      },
    });
    const insert = (k: string) => () => db.prepare('INSERT INTO t VALUES (?)').run(k).changes;
    expect(await commit.run(insert('a'))).to.equal(1);
    moved = true;
    const settled = await Promise.allSettled([commit.run(insert('b')), commit.run(insert('c'))]);
    expect(settled.map((s) => (s.status === 'rejected' ? (s.reason as { code: string }).code : 'resolved'))).to.deep.equal([
      'SCHEDULER_STORE_FILE_MOVED',
      'SCHEDULER_STORE_FILE_MOVED',
    ]);
    db.close();
  });
});
