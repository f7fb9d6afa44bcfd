/**
 * What a SQLite error or a look at the database path says about the store's health: the mapping
 * from SQLite's result codes (sqlite.org/rescode.html) to {@link StoreFault}s, and the identity
 * (device, inode) of the file the service opened, compared with what the path names now.
 */
import fs from 'node:fs';
import type { StoreFault, StoreFaultKind } from '../store-health';

/**
 * `code` the writer thread gives a commit whose file is no longer the one at the store's path
 * (deleted or replaced after the service opened it): the commit went to a file nobody will read
 * again, so its callers are not told it succeeded. The message says which.
 */
export const STORE_FILE_MOVED = 'SCHEDULER_STORE_FILE_MOVED';

/** Device and inode of a file: two paths (or a path at two moments) name the same file when both match. */
export interface FileIdentity {
  dev: number;
  ino: number;
}

/**
 * The write-ahead log of the store at `file`: in WAL mode SQLite keeps `<file>-wal` (same
 * directory) for as long as a connection has the store open, and commits go there before a
 * checkpoint copies them into the file (sqlite.org/wal.html). Deleting it while the service runs
 * loses what was not checkpointed yet, so it is watched as the file itself is.
 */
export function walFileOf(file: string): string {
  return `${file}-wal`;
}

/** The identity of the file at `file`, or null when nothing is there. */
export function identityOf(file: string): FileIdentity | null {
  const st = fs.statSync(file, { throwIfNoEntry: false });
  return st ? { dev: st.dev, ino: st.ino } : null;
}

/**
 * Compares the file at `file` now with the one opened (`opened`).
 * @param stat how the path is looked at (tests pass a fake)
 * @returns `file_deleted` (nothing at the path), `file_replaced` (another file), or null (the same file)
 */
export function fileChangeOf(
  file: string,
  opened: FileIdentity,
  stat: (file: string) => FileIdentity | null = identityOf,
): 'file_deleted' | 'file_replaced' | null {
  const now = stat(file);
  if (!now) return 'file_deleted';
  return now.dev === opened.dev && now.ino === opened.ino ? null : 'file_replaced';
}

/** Which of the store's files a check looks at (named in its cause line). */
export type StoreFileKind = 'database file' | 'write-ahead log';

/**
 * Throws an error with code {@link STORE_FILE_MOVED} when the file at `file` is no longer `opened`
 * (the writer's check after each commit), or its write-ahead log ({@link walFileOf}) no longer
 * `wal` (when given: the log the service had open).
 */
export function assertSameFile(file: string, opened: FileIdentity, wal: FileIdentity | null = null): void {
  const change = fileChangeOf(file, opened);
  if (change) throw Object.assign(new Error(movedCause(change, file)), { code: STORE_FILE_MOVED });
  const walChange = wal ? fileChangeOf(walFileOf(file), wal) : null;
  if (walChange) throw Object.assign(new Error(movedCause(walChange, walFileOf(file), 'write-ahead log')), { code: STORE_FILE_MOVED });
}

/** The cause line of a moved file (`file`: its path), for the log, `/readyz` and the 503's `details.cause`. */
export function movedCause(kind: 'file_deleted' | 'file_replaced', file: string, what: StoreFileKind = 'database file'): string {
  return kind === 'file_deleted'
    ? `the ${what} ${file} was deleted while the service had it open; writes since then are in no file`
    : `the ${what} ${file} was replaced by another file while the service had it open`;
}

/**
 * The fault a failed SQLite call reveals, or null for an error that is not about the store's
 * health (a constraint, a bug, an idempotency conflict). Full disk (`SQLITE_FULL`), I/O errors
 * (`SQLITE_IOERR*`), a read-only file (`SQLITE_READONLY*`) and a file that cannot be opened
 * (`SQLITE_CANTOPEN`) and a write lock another process holds past the busy timeout
 * (`SQLITE_BUSY*`: `stalled`) are recoverable; a malformed file (`SQLITE_CORRUPT`, `SQLITE_NOTADB`) and a
 * moved file ({@link STORE_FILE_MOVED}, `SQLITE_READONLY_DBMOVED`) are not.
 * @param now epoch ms (the fault's `since`)
 */
export function sqliteFaultOf(err: unknown, file: string, now: number): StoreFault | null {
  const e = err as { code?: unknown; message?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : '';
  const message = typeof e?.message === 'string' ? e.message : String(err);
  const fault = (kind: StoreFaultKind, recoverable: boolean, cause = `${code} ${message}`): StoreFault => ({
    kind,
    target: file,
    cause,
    recoverable,
    since: now,
  });
  if (code === STORE_FILE_MOVED) return fault(message.includes('deleted') ? 'file_deleted' : 'file_replaced', false, message);
  if (code === 'SQLITE_READONLY_DBMOVED') return fault('file_replaced', false);
  if (code === 'SQLITE_FULL') return fault('disk_full', true);
  if (code.startsWith('SQLITE_IOERR')) return fault(/ENOSPC|disk is full/i.test(message) ? 'disk_full' : 'io_error', true);
  if (code.startsWith('SQLITE_READONLY')) return fault('read_only', true);
  if (code.startsWith('SQLITE_CANTOPEN')) return fault('cannot_open', true);
  if (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB') return fault('corrupt', false);
  // Another process holds the file's write lock past the busy timeout (connection.ts): an
  // operator's sqlite3 shell or a backup tool in a write transaction. Before, a 500 per write.
  if (code.startsWith('SQLITE_BUSY'))
    return fault(
      'stalled',
      true,
      `${code} ${message}: another process holds the write lock of the store file (a sqlite3 shell or a backup tool in a transaction?)`,
    );
  return null;
}
