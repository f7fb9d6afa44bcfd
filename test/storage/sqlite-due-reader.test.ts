/**
 * SQLite-specific: the partition owners' window reads (loadDue) run on their own thread for file
 * stores (src/storage/sqlite/due-reader.ts), answer exactly what the same read answers on a
 * connection of the caller, and a thread that exited is replaced at the next read.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openConnection } from '../../src/storage/sqlite/connection';
import { InProcessDueReader, ThreadDueReader } from '../../src/storage/sqlite/due-reader';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store';
import { newTask, PARTITIONS, T0 } from './fixtures';

describe('SqliteStore window reads (own thread)', () => {
  let dir: string;
  let file: string;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'store-due-reads-'));
    file = path.join(dir, 'scheduler.db');
  });

  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('answers every partition of a herd due at one instant as the caller-connection read does', async () => {
    const store = new SqliteStore(file);
    await store.open(PARTITIONS);
    const db = openConnection(file);
    const reader = new InProcessDueReader(db);
    try {
      const due = T0 + 60_000;
      await store.insertTasks(Array.from({ length: 400 }, (_, i) => newTask(`herd-${i}`, { scheduledAt: due })));
      await store.insertTasks(Array.from({ length: 40 }, (_, i) => newTask(`now-${i}`)));
      let seen = 0;
      for (let p = 0; p < PARTITIONS; p++) {
        for (const limit of [3, 1000]) {
          const threaded = await store.loadDue(p, due, limit);
          expect(threaded).to.deep.equal(await reader.loadDue(p, due, limit));
          if (limit === 1000) seen += threaded.length;
        }
        expect(await store.loadDue(p, due - 1, 1000)).to.have.length((await reader.loadDue(p, due - 1, 1000)).length);
      }
      expect(seen).to.equal(440);
    } finally {
      db.close();
      await store.close();
    }
  });

  it('starts a new thread at the next read after its thread exited, and refuses reads once closed', async () => {
    const reader = new ThreadDueReader(file); // no file yet: the thread cannot open it and exits
    let refused: unknown = null;
    await reader.loadDue(0, T0, 10).catch((err: unknown) => (refused = err));
    expect(refused).to.not.equal(null); // the thread's open failed (SQLITE_CANTOPEN)
    const store = new SqliteStore(file);
    await store.open(PARTITIONS);
    try {
      await store.insertTasks([newTask('one')]);
      const all = (await Promise.all(Array.from({ length: PARTITIONS }, (_, p) => reader.loadDue(p, T0 + 1, 10)))).flat();
      expect(all.map((e) => e.id)).to.deep.equal(['one']);
    } finally {
      await reader.close();
      await store.close();
    }
    let closed: unknown = null;
    await reader.loadDue(0, T0, 10).catch((err: unknown) => (closed = err));
    expect((closed as Error).message).to.equal('store is not open');
  });
});
