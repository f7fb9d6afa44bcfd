/**
 * The embedded store when another process holds its file's write lock (an operator's `sqlite3`
 * shell or a backup tool inside a write transaction): a write waits the busy timeout (5 s,
 * connection.ts) and then answers 503 `STORE_UNAVAILABLE` with the recoverable fault `stalled`
 * (before: the raw `SQLITE_BUSY`, a 500, with `/readyz` at 200); reads go on (WAL readers are not
 * blocked), and the fault ends by itself at the file watch's first probe write that commits once
 * the lock is released. Here a second connection in this process stands for the other process.
 */
import { expect } from 'chai';
import path from 'node:path';
import { StoreUnavailableError } from '../../src/domain/errors';
import { sqliteDatabaseClass } from '../../src/storage/sqlite/driver';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store';
import type { StoreFault } from '../../src/storage/store-health';
import { tempDir } from '../helpers/temp-dir';
import { newTask, PARTITIONS, rejectionOf } from './fixtures';

describe('SqliteStore: another process holds the write lock of its file', function () {
  this.timeout(30_000);
  const dir = tempDir('sqlite-busy-');
  after(() => dir.remove());

  for (const writerThread of [true, false]) {
    const mode = writerThread ? 'writer thread' : 'in-process writer';

    it(`${mode}: writes answer STORE_UNAVAILABLE (stalled) after the busy timeout, reads go on, the fault ends after the release`, async () => {
      const file = path.join(dir.path, `busy-${writerThread}.db`);
      const store = new SqliteStore(file, { writerThread });
      await store.open(PARTITIONS);
      const Database = sqliteDatabaseClass(); // this Node's better-sqlite3 (driver.ts)
      const other = new Database(file);
      try {
        await store.insertTasks([newTask('before')]);
        other.prepare('BEGIN IMMEDIATE').run();
        const err = await rejectionOf(() => store.insertTasks([newTask('held')]));
        expect(err).to.be.instanceOf(StoreUnavailableError);
        expect((err as StoreUnavailableError).details).to.include({ fault: 'stalled', target: file, recoverable: true });
        expect(store.health.fault?.cause).to.match(/^SQLITE_BUSY database is locked: another process holds the write lock/);
        expect((await store.getTask('before'))?.id).to.equal('before');

        const ended = new Promise<StoreFault | null>((resolve) => {
          const off = store.health.onChange((f) => {
            off();
            resolve(f);
          });
        });
        other.prepare('ROLLBACK').run();
        expect(await ended).to.equal(null);
        await store.insertTasks([newTask('after')]);
        expect((await store.getTask('after'))?.id).to.equal('after');
        expect(await store.getTask('held')).to.equal(null);
      } finally {
        other.close();
        await store.close();
      }
    });
  }
});
