/**
 * One service per embedded store. A second service on the same SQLite file would take the first
 * one's RUNNING attempts for orphans of a crash at its start-up and run them again while the first
 * still runs them (found by a trial: every such task ran twice). So a service holds an exclusive
 * SQLite lock on a small companion file, `<sqlitePath>.lock`, from start-up until it closes.
 *
 * The lock is SQLite's own (`locking_mode = EXCLUSIVE` after one write transaction: the EXCLUSIVE
 * lock is kept, sqlite.org/pragma.html#pragma_locking_mode), which on Unix is a POSIX advisory
 * lock: the kernel drops it when the process ends, however it ends (crash, SIGKILL), so it is
 * never stale and needs no pid check. A second connection in the same process is refused too.
 */
import fs from 'node:fs';
import path from 'node:path';
import { sqliteDatabaseClass, SqliteDatabase } from './driver';
import { StoreConfigError } from '../store';
import { openRefusalOf } from './store-preflight';

/** The embedded store is already used by another running service. Not retryable as such. */
export class StoreInUseError extends StoreConfigError {
  constructor(readonly file: string) {
    super(
      `invalid configuration: sqlitePath (env SQLITE_PATH): the store ${file} is in use by another running scheduler ` +
        `(it holds ${file}.lock); stop that one first, or give this one another SQLITE_PATH`,
    );
    this.name = 'StoreInUseError';
  }
}

/** An exclusive hold on an embedded store's companion lock file; {@link release} gives it back. */
export class StoreLock {
  private constructor(private readonly db: SqliteDatabase) {}

  /**
   * Takes the lock of the store at `file` (a path; not `:memory:`), without waiting. Keep the
   * returned lock referenced until {@link release}: one collected as garbage has its connection
   * closed by the driver's finalizer, and the lock is given up with it.
   * @throws StoreInUseError when another connection, in this process or another, holds it
   */
  static acquire(file: string): StoreLock {
    fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true }); // as the store's own open does
    const lockFile = `${file}.lock`;
    const existed = fs.existsSync(lockFile);
    let db: SqliteDatabase;
    try {
      db = new (sqliteDatabaseClass())(lockFile, { timeout: 0 });
    } catch (err) {
      throw refusal(err, file, lockFile, existed);
    }
    try {
      db.pragma('locking_mode = EXCLUSIVE');
      db.exec(`BEGIN EXCLUSIVE; CREATE TABLE IF NOT EXISTS holder (pid INTEGER NOT NULL); DELETE FROM holder;`);
      db.prepare('INSERT INTO holder (pid) VALUES (?)').run(process.pid);
      db.exec('COMMIT');
      return new StoreLock(db);
    } catch (err) {
      db.close();
      if ((err as { code?: string }).code === 'SQLITE_BUSY') throw new StoreInUseError(file);
      throw refusal(err, file, lockFile, existed);
    }
  }

  /** Gives the lock back (closing its connection). Idempotent. */
  release(): void {
    if (this.db.open) this.db.close();
  }
}

/**
 * The start-up refusal for a lock that could not be taken for a reason of the file system (a full
 * disk, a read-only volume): one line naming the file (exit 78). A lock file this attempt created is
 * removed again, so that it is not taken later for the sign of a store that was used here.
 */
function refusal(err: unknown, file: string, lockFile: string, existed: boolean): unknown {
  if (!existed) {
    for (const f of [lockFile, `${lockFile}-journal`]) {
      try {
        fs.rmSync(f, { force: true });
      } catch {
        /* left as it is */
      }
    }
  }
  return openRefusalOf(err, file);
}
