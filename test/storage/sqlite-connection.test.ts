/**
 * SQLite-specific: the page cache each connection of the embedded store asks for
 * (src/storage/sqlite/connection.ts, open-store-file.ts). The writer keeps 64 MiB; the main
 * connection of a store whose writer has its own thread only reads and keeps 16 MiB after the
 * migrations, which run with the full 64 MiB.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_CACHE_KIB, openConnection } from '../../src/storage/sqlite/connection';
import { MAIN_READS_CACHE_KIB, openStoreFile } from '../../src/storage/sqlite/open-store-file';
import { PARTITIONS } from './fixtures';

describe('SQLite connections: page cache sizes', () => {
  let dir: string;
  let file: string;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'store-connection-'));
    file = path.join(dir, 'scheduler.db');
  });

  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('gives a connection 64 MiB unless it asks for another size (negative cache_size: KiB)', () => {
    const writer = openConnection(file);
    const reader = openConnection(file, { fileMustExist: true, cacheKib: 8192 });
    try {
      expect(DEFAULT_CACHE_KIB).to.equal(65536);
      expect(writer.pragma('cache_size', { simple: true })).to.equal(-65536);
      expect(reader.pragma('cache_size', { simple: true })).to.equal(-8192);
      expect(reader.pragma('journal_mode', { simple: true })).to.equal('wal');
      expect(reader.pragma('synchronous', { simple: true })).to.equal(2); // FULL
    } finally {
      reader.close();
      writer.close();
    }
  });

  it('keeps the reads cache on the main connection after migrating a new store, and 64 MiB when asked for none', () => {
    const { db, change } = openStoreFile(file, PARTITIONS, { readsCacheKib: MAIN_READS_CACHE_KIB });
    try {
      expect(change).to.not.equal(null);
      expect(db.pragma('cache_size', { simple: true })).to.equal(-MAIN_READS_CACHE_KIB);
    } finally {
      db.close();
    }
    const again = openStoreFile(file, PARTITIONS);
    try {
      expect(again.change).to.equal(null);
      expect(again.db.pragma('cache_size', { simple: true })).to.equal(-DEFAULT_CACHE_KIB);
    } finally {
      again.db.close();
    }
  });
});
