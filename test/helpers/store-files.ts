import fs from 'node:fs';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store';
import { newTask, PARTITIONS } from '../storage/fixtures';

/**
 * Makes a corrupt SQLite store at `file`: a real store with one task, closed, whose first page past
 * the 100-byte header (the schema table's b-tree page) is then overwritten with garbage, so the
 * header still says "SQLite format 3" but SQLite reports the file malformed at its first read.
 */
export async function makeCorruptStore(file: string): Promise<void> {
  const store = new SqliteStore(file, { writerThread: false });
  await store.open(PARTITIONS);
  await store.insertTasks([newTask('c-1')]);
  await store.close();
  const fd = fs.openSync(file, 'r+');
  try {
    fs.writeSync(fd, Buffer.alloc(3000, 0xa5), 0, 3000, 100);
  } finally {
    fs.closeSync(fd);
  }
}
