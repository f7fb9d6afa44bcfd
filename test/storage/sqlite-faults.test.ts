/**
 * The embedded store under faults of its file: deleted or replaced while open (the writer's check
 * after each commit: no caller is told a write succeeded that went to a file nobody will read), and
 * the start-up checks of its path (a missing directory, a foreign, corrupt or vanished file).
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { StoreUnavailableError } from '../../src/domain/errors';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store';
import { checkStorePath } from '../../src/storage/sqlite/store-preflight';
import { StoreConfigError } from '../../src/storage/store';
import { StartupError } from '../../src/domain/startup-error';
import { tempDir } from '../helpers/temp-dir';
import { makeCorruptStore } from '../helpers/store-files';
import { newTask, PARTITIONS, rejectionOf } from './fixtures';

describe('SqliteStore: its file deleted or replaced while open', function () {
  this.timeout(20_000);
  const dir = tempDir('sqlite-faults-');
  after(() => dir.remove());

  for (const writerThread of [true, false]) {
    const mode = writerThread ? 'writer thread' : 'in-process writer';

    it(`${mode}: a delete makes the next write answer STORE_UNAVAILABLE (file_deleted), and every later one at once`, async () => {
      const file = path.join(dir.path, `deleted-${writerThread}.db`);
      const store = new SqliteStore(file, { writerThread });
      await store.open(PARTITIONS);
      try {
        await store.insertTasks([newTask('before')]);
        fs.rmSync(file);
        const err = await rejectionOf(() => store.insertTasks([newTask('after')]));
        expect(err).to.be.instanceOf(StoreUnavailableError);
        expect((err as StoreUnavailableError).details).to.include({ fault: 'file_deleted', target: file, recoverable: false });
        expect(store.health.fault).to.include({ kind: 'file_deleted', recoverable: false });
        expect(await rejectionOf(() => store.cancelTask('before', 1))).to.be.instanceOf(StoreUnavailableError);
        expect((await store.getTask('before'))?.id).to.equal('before'); // reads go on (the open file)
        expect(fs.existsSync(file)).to.equal(false); // nothing made a new empty file in its place
      } finally {
        await store.close();
      }
    });

    it(`${mode}: its write-ahead log deleted makes the next write answer STORE_UNAVAILABLE (file_deleted, naming the log)`, async () => {
      const file = path.join(dir.path, `wal-deleted-${writerThread}.db`);
      const store = new SqliteStore(file, { writerThread });
      await store.open(PARTITIONS);
      try {
        await store.insertTasks([newTask('w-before')]);
        fs.rmSync(`${file}-wal`);
        const err = await rejectionOf(() => store.insertTasks([newTask('w-after')]));
        expect(err).to.be.instanceOf(StoreUnavailableError);
        expect((err as StoreUnavailableError).details).to.include({ fault: 'file_deleted', target: file, recoverable: false });
        expect(store.health.fault?.cause).to.include(`${file}-wal`);
        expect(await rejectionOf(() => store.insertTasks([newTask('w-later')]))).to.be.instanceOf(StoreUnavailableError);
      } finally {
        await store.close();
      }
    });

    it(`${mode}: a file renamed over it makes the next write answer STORE_UNAVAILABLE (file_replaced)`, async () => {
      const file = path.join(dir.path, `replaced-${writerThread}.db`);
      const store = new SqliteStore(file, { writerThread });
      await store.open(PARTITIONS);
      try {
        await store.insertTasks([newTask('r-before')]);
        const other = path.join(dir.path, `other-${writerThread}.db`);
        fs.copyFileSync(file, other);
        fs.renameSync(other, file);
        const err = await rejectionOf(() => store.insertTasks([newTask('r-after')]));
        expect((err as StoreUnavailableError).details).to.include({ fault: 'file_replaced' });
      } finally {
        await store.close();
      }
    });
  }
});

describe('SqliteStore: a read that fails for the file', function () {
  this.timeout(20_000);
  const dir = tempDir('sqlite-read-faults-');
  after(() => dir.remove());

  it('its write-ahead log truncated under it: reads answer STORE_UNAVAILABLE with the fault, not the raw SQLite error (a 500)', async () => {
    const file = path.join(dir.path, 'truncated-wal.db');
    const store = new SqliteStore(file, { writerThread: true });
    await store.open(PARTITIONS);
    try {
      const ids: string[] = [];
      for (let b = 0; b < 5; b++) {
        const batch = Array.from({ length: 100 }, (_, i) => newTask(`t-${b}-${i}`, { payload: { pad: 'x'.repeat(500) } }));
        ids.push(...batch.map((t) => t.id));
        await store.insertTasks(batch);
      }
      fs.truncateSync(`${file}-wal`, 0);
      const err = await rejectionOf(() => store.getTask(ids[ids.length - 1]));
      expect(err).to.be.instanceOf(StoreUnavailableError);
      expect((err as StoreUnavailableError).details).to.include({ target: file });
      expect((err as StoreUnavailableError).details.cause).to.match(/^SQLITE_/);
      expect(store.health.fault, 'the fault is recorded: /readyz says so').to.not.equal(null);
    } finally {
      await store.close().catch(() => undefined);
    }
  });
});

describe('embedded store start-up checks', () => {
  const dir = tempDir('sqlite-preflight-');
  after(() => dir.remove());
  const refusal = (fn: () => unknown): StoreConfigError => {
    try {
      fn();
    } catch (err) {
      expect(err).to.be.instanceOf(StoreConfigError);
      expect(err).to.be.instanceOf(StartupError); // exit 78, one line
      expect((err as Error).message).not.to.include('\n');
      return err as StoreConfigError;
    }
    throw new Error('not refused');
  };

  it('a missing directory is refused (naming it and SQLITE_CREATE_DIR), and created only when told to', () => {
    const file = path.join(dir.path, 'missing', 'deeper', 's.db');
    expect(refusal(() => checkStorePath(file, false)).message).to.match(
      /directory .*missing\/deeper does not exist .*SQLITE_CREATE_DIR=true/,
    );
    expect(fs.existsSync(path.dirname(file))).to.equal(false);
    checkStorePath(file, true);
    expect(fs.statSync(path.dirname(file)).isDirectory()).to.equal(true);
  });

  it('a foreign file is refused before SQLite touches it; an empty file or a new path is fine', () => {
    const foreign = path.join(dir.path, 'notes.db');
    fs.writeFileSync(foreign, 'these are my notes, not a database\n'.repeat(10));
    expect(refusal(() => checkStorePath(foreign, false)).message).to.match(/notes\.db is not a SQLite database \(foreign file\)/);
    expect(fs.readFileSync(foreign, 'utf8')).to.match(/^these are my notes/); // untouched
    const empty = path.join(dir.path, 'empty.db');
    fs.writeFileSync(empty, '');
    checkStorePath(empty, false);
    checkStorePath(path.join(dir.path, 'new.db'), false);
    checkStorePath(':memory:', false);
  });

  it('a store file gone while its .lock companion remains is refused (restore it, or delete the lock)', () => {
    const file = path.join(dir.path, 'gone.db');
    fs.writeFileSync(`${file}.lock`, '');
    expect(refusal(() => checkStorePath(file, false)).message).to.match(
      /gone\.db is missing, but .*gone\.db\.lock shows a store was used here/,
    );
  });

  it('a directory in place of the file, or of its folder, is refused', () => {
    fs.mkdirSync(path.join(dir.path, 'adir.db'));
    refusal(() => checkStorePath(path.join(dir.path, 'adir.db'), false));
    fs.writeFileSync(path.join(dir.path, 'plain'), '');
    refusal(() => checkStorePath(path.join(dir.path, 'plain', 's.db'), false));
  });

  it('a corrupt store is refused at open with one line naming the file (no stack, exit 78)', async () => {
    const file = path.join(dir.path, 'corrupt.db');
    await makeCorruptStore(file);
    checkStorePath(file, false); // its header is intact: only SQLite can tell
    const err = await rejectionOf(() => new SqliteStore(file).open(PARTITIONS));
    expect(err).to.be.instanceOf(StoreConfigError);
    expect((err as Error).message).to.match(/^the store .*corrupt\.db is corrupt \(SQLITE_CORRUPT.*restore it from a backup/);
  });
});
