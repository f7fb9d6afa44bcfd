import fs from 'node:fs';

/**
 * Corrupts a closed SQLite store: overwrites the first page past the 100-byte header (the schema
 * table's b-tree page) with garbage, so the header still says "SQLite format 3" but SQLite reports
 * the file malformed at its first read.
 */
export function corruptSchemaPage(file: string): void {
  const fd = fs.openSync(file, 'r+');
  try {
    fs.writeSync(fd, Buffer.alloc(3000, 0xa5), 0, 3000, 100);
  } finally {
    fs.closeSync(fd);
  }
}
