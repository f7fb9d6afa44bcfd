import { sqliteDatabaseClass, SqliteDatabase } from './driver';

/** Size (bytes) the WAL file is cut back to after a restart (see openConnection). */
const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

/** Page cache (KiB) of a connection that does not ask for another size: the writer's (see below). */
export const DEFAULT_CACHE_KIB = 65536;

/**
 * Opens a connection with the settings every connection of the embedded store uses: WAL (readers
 * never block the writer), `synchronous=FULL` (a commit is on disk before it returns), a 5 s busy
 * timeout, a page cache (64 MiB unless `options.cacheKib` says otherwise: the writer's, so the
 * hot part of the tables and indexes it updates stays in memory), and a 64 MiB
 * `journal_size_limit`: SQLite reuses its WAL file from the start once a checkpoint has copied it
 * all and never shrinks it by itself, so without a limit the file keeps the size of the largest
 * burst ever written; with one, the first commit after a restart truncates it back
 * (https://sqlite.org/pragma.html#pragma_journal_size_limit).
 * @param options.fileMustExist refuse to create the file (the store's threads open a file the main
 *   connection created: if it is gone, they must not make an empty one in its place)
 * @param options.cacheKib page cache of this connection in KiB (SQLite's negative `cache_size`,
 *   https://sqlite.org/pragma.html#pragma_cache_size); each connection has its own, and all of
 *   them live in the service's process, so a reader that rarely reads a page twice asks for less
 */
export function openConnection(file: string, options: { fileMustExist?: boolean; cacheKib?: number } = {}): SqliteDatabase {
  const db = new (sqliteDatabaseClass())(file, options.fileMustExist ? { fileMustExist: true } : {});
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.pragma('busy_timeout = 5000');
    db.pragma(`cache_size = -${Math.round(options.cacheKib ?? DEFAULT_CACHE_KIB)}`);
    db.pragma('wal_autocheckpoint = 10000');
    db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
    db.pragma('foreign_keys = ON');
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}
