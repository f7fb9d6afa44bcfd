/**
 * Online backup of the embedded store (docs/OPERATIONS.md "Backup and restore"), safe while a
 * service runs on the file, from another process: SQLite's backup API (sqlite.org/backup.html)
 * through better-sqlite3's `db.backup`, all pages in one step, so the copy is one read
 * transaction's snapshot (WAL: the service keeps writing meanwhile; a reader never blocks the
 * writer). Every task whose submission was answered before the backup started is in the copy
 * (a 202 comes after its COMMIT). The copy is written next to the destination, checked with
 * `PRAGMA quick_check`, then renamed into place, so the destination is never a partial file.
 */
import fs from 'node:fs';
import path from 'node:path';
import { sqliteDatabaseClass, SqliteDatabase } from './driver';

/** Why a backup could not be made; the message is one line naming the file. */
export class BackupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BackupError';
  }
}

/** What a backup copied. */
export interface BackupResult {
  source: string;
  destination: string;
  /** Pages of the copy (its size is `pages × page_size`). */
  pages: number;
  bytes: number;
  /** The store's schema version (`PRAGMA user_version`) in the copy. */
  schemaVersion: number;
}

/** The most pages better-sqlite3 copies in one step: the whole store at once. */
const ALL_PAGES = 0x7fffffff;

/**
 * Copies the SQLite store at `source` to `destination`.
 * @param options.overwrite replace an existing `destination` (default: refuse)
 * @throws BackupError when `source` is missing or not a SQLite store, `destination` exists (without
 *   `overwrite`), is the source itself or cannot be written, or the copy fails its check
 */
export async function backupSqlite(source: string, destination: string, options: { overwrite?: boolean } = {}): Promise<BackupResult> {
  const src = path.resolve(source);
  const dest = path.resolve(destination);
  // Compared through symbolic links: another path to the store (or its folder) is still the store.
  const [realSrc, realDest] = [canonicalPath(src), canonicalPath(dest)];
  if (realSrc === realDest) throw new BackupError(`backup: ${dest} is the store itself; give another destination`);
  // The store's companions: replacing one under a running service (its lock, its WAL) breaks it.
  for (const companion of STORE_COMPANIONS) {
    if (realDest === `${realSrc}${companion}`)
      throw new BackupError(`backup: ${dest} is the store's own ${companion} file; give another destination`);
  }
  if (!fs.existsSync(src)) throw new BackupError(`backup: no store at ${src} (SQLITE_PATH)`);
  if (fs.existsSync(dest) && !options.overwrite) throw new BackupError(`backup: ${dest} exists; remove it or pass --force`);
  if (fs.existsSync(dest) && !fs.statSync(dest).isFile())
    throw new BackupError(`backup: ${dest} is not a regular file (a device, a folder, …); give a file's path`);
  const partial = `${dest}.partial-${process.pid}`;
  let db: SqliteDatabase | null = null;
  try {
    db = new (sqliteDatabaseClass())(src, { fileMustExist: true });
    db.pragma('busy_timeout = 5000');
    db.pragma('schema_version'); // reads page 1: a file that is not a SQLite database fails here, naming it below
    await db.backup(partial, { progress: () => ALL_PAGES });
  } catch (err) {
    removeQuietly(partial);
    throw new BackupError(`backup: cannot copy ${src} to ${dest}: ${oneLine(err)}`);
  } finally {
    db?.close();
  }
  try {
    const result = checkCopy(partial);
    fs.renameSync(partial, dest);
    return { source: src, destination: dest, ...result };
  } catch (err) {
    removeQuietly(partial);
    throw err instanceof BackupError ? err : new BackupError(`backup: cannot write ${dest}: ${oneLine(err)}`);
  }
}

/** `file` with every symbolic link resolved: the file's own real path, else its folder's and its name; else as given. */
function canonicalPath(file: string): string {
  try {
    return fs.realpathSync(file);
  } catch {
    try {
      return path.join(fs.realpathSync(path.dirname(file)), path.basename(file));
    } catch {
      return file;
    }
  }
}

/** Files SQLite and the service keep beside a store (`<path><suffix>`): never a backup's destination. */
const STORE_COMPANIONS = ['-wal', '-shm', '-journal', '.lock', '.lock-journal'];

/** Removes a partial copy if there is one; a path that cannot hold one (its parent a file) is no error. */
function removeQuietly(file: string): void {
  try {
    fs.rmSync(file, { force: true });
  } catch {
    /* nothing was written there */
  }
}

/** Opens the copy, checks it (`quick_check`) and reads its size and schema version. @throws BackupError */
function checkCopy(file: string): Omit<BackupResult, 'source' | 'destination'> {
  const copy = new (sqliteDatabaseClass())(file, { fileMustExist: true });
  try {
    const check = copy.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new BackupError(`backup: the copy ${file} fails its check: ${String(check)}`);
    const pages = copy.pragma('page_count', { simple: true }) as number;
    const pageSize = copy.pragma('page_size', { simple: true }) as number;
    return { pages, bytes: pages * pageSize, schemaVersion: copy.pragma('user_version', { simple: true }) as number };
  } finally {
    copy.close();
  }
}

const oneLine = (err: unknown): string => ((err as Error)?.message ?? String(err)).replace(/\s+/g, ' ').trim();
