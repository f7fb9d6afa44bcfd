/**
 * Runs the storage conformance suite against SqliteStore on a fresh temp file per test, once with
 * the default writer thread and once writing in process (the mode `:memory:` databases use).
 */
import { sqliteDatabaseClass } from '../../src/storage/sqlite/driver';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store';
import { Store } from '../../src/storage/store';
import { describeStoreConformance } from './conformance';

for (const writerThread of [true, false]) {
  const dirs = new Map<Store, string>();
  describeStoreConformance(writerThread ? 'sqlite (writer thread)' : 'sqlite (in-process writer)', {
    async create() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'store-conformance-'));
      const store = new SqliteStore(path.join(dir, 'scheduler.db'), { writerThread });
      dirs.set(store, dir);
      return store;
    },
    async destroy(store) {
      await store.close();
      const dir = dirs.get(store);
      dirs.delete(store);
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    },
    async forceState(store, id, state) {
      // A second connection on the store's file (WAL): the store has committed everything it answered.
      const db = new (sqliteDatabaseClass())(path.join(dirs.get(store) as string, 'scheduler.db'));
      try {
        db.pragma('busy_timeout = 5000');
        db.prepare(`UPDATE tasks SET state = ? WHERE id = ?`).run(state, id);
      } finally {
        db.close();
      }
    },
  });
}
