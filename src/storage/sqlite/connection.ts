import Database from 'better-sqlite3';

/** Size (bytes) the WAL file is cut back to after a restart (see openConnection). */
const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

/**
 * Opens a connection with the settings every connection of the embedded store uses: WAL (readers
 * never block the writer), `synchronous=FULL` (a commit is on disk before it returns), a 5 s busy
 * timeout, a 64 MiB page cache so the hot part of the tables and indexes stays in memory, and a
 * 64 MiB `journal_size_limit`: SQLite reuses its WAL file from the start once a checkpoint has
 * copied it all and never shrinks it by itself, so without a limit the file keeps the size of
 * the largest burst ever written; with one, the first commit after a restart truncates it back
 * (https://sqlite.org/pragma.html#pragma_journal_size_limit).
 * @param options.fileMustExist refuse to create the file (the store's threads open a file the main
 *   connection created: if it is gone, they must not make an empty one in its place)
 */
export function openConnection(file: string, options: { fileMustExist?: boolean } = {}): Database.Database {
  const db = new Database(file, options.fileMustExist ? { fileMustExist: true } : {});
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.pragma('busy_timeout = 5000');
    db.pragma('cache_size = -65536');
    db.pragma('wal_autocheckpoint = 10000');
    db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
    db.pragma('foreign_keys = ON');
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}
