/**
 * Start-up checks of the embedded store's path, and the start-up refusal of a file SQLite cannot
 * use: each ends start-up with a {@link StoreConfigError} (exit 78, one line naming the file and
 * the next step) instead of a stack trace, and a missing directory (a volume not mounted) is never
 * created unless the operator asked for it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { StoreConfigError } from '../store';

/** The first 16 bytes of every SQLite 3 database file (sqlite.org/fileformat.html, "The Database Header"). */
const SQLITE_HEADER = Buffer.from('SQLite format 3\u0000', 'latin1');
/** Size of the database header: a shorter file with content is not a database. */
const HEADER_BYTES = 100;

/** Where the next steps of a store fault are described. */
const RUNBOOK = 'docs/OPERATIONS.md "Store faults"';

/**
 * Checks the store's path before anything opens it:
 * - its directory exists (else it is created only with `createDir`), is a directory, and this
 *   process may create files in it (SQLite writes `-wal`, `-shm` and the `.lock` beside the file);
 * - a file at the path is a regular file this process may read and write, and is empty or starts
 *   with the SQLite header (a foreign file is refused before SQLite touches it);
 * - no file at the path (or an empty one) while its `.lock` companion exists means the store was
 *   used here and has gone (deleted, truncated, a volume not mounted): refused, not silently
 *   replaced by an empty store.
 * @param file the configured path (`SQLITE_PATH`); `:memory:` is not checked
 * @param createDir create a missing directory (env `SQLITE_CREATE_DIR`)
 * @throws StoreConfigError naming the file or directory and what to do
 */
export function checkStorePath(file: string, createDir: boolean): void {
  if (file === ':memory:') return;
  const abs = path.resolve(file);
  const dir = path.dirname(abs);
  const dirStat = fs.statSync(dir, { throwIfNoEntry: false });
  if (!dirStat) {
    if (!createDir) {
      throw new StoreConfigError(
        `the store's directory ${dir} does not exist (SQLITE_PATH=${file}): mount or create it, ` +
          `or set SQLITE_CREATE_DIR=true to have the service create it`,
      );
    }
    fs.mkdirSync(dir, { recursive: true });
  } else if (!dirStat.isDirectory()) {
    throw new StoreConfigError(
      `the store's directory ${dir} is not a directory (SQLITE_PATH=${file}): give SQLITE_PATH a file in a directory`,
    );
  }
  if (!accessible(dir, fs.constants.W_OK | fs.constants.X_OK)) {
    throw new StoreConfigError(
      `the store's directory ${dir} is not writable by this process (uid ${process.getuid?.() ?? '?'}; SQLite creates ` +
        `${path.basename(abs)}-wal, -shm and .lock beside ${abs}): fix its permissions or mount it read-write`,
    );
  }
  const st = fs.statSync(abs, { throwIfNoEntry: false });
  if (!st) {
    if (fs.existsSync(`${abs}.lock`)) {
      throw new StoreConfigError(
        `the store ${abs} is missing, but ${abs}.lock shows a store was used here: restore the file from a backup (${RUNBOOK}), ` +
          `or delete ${abs}.lock to start an empty store`,
      );
    }
    return;
  }
  if (!st.isFile()) throw new StoreConfigError(`the store ${abs} is not a regular file: give SQLITE_PATH a database file`);
  if (st.size === 0 && fs.existsSync(`${abs}.lock`)) {
    throw new StoreConfigError(
      `the store ${abs} is empty (0 bytes), but ${abs}.lock shows a store was used here: restore the file from a backup (${RUNBOOK}), ` +
        `or delete both to start an empty store`,
    );
  }
  if (!accessible(abs, fs.constants.R_OK | fs.constants.W_OK)) {
    throw new StoreConfigError(`the store ${abs} is not readable and writable by this process: fix its permissions or ownership`);
  }
  if (st.size > 0 && !startsWithHeader(abs, st.size)) {
    throw new StoreConfigError(
      `${abs} is not a SQLite database (foreign file): check that SQLITE_PATH names the scheduler's store, or move the file away to start an empty store`,
    );
  }
}

/**
 * The start-up refusal for an error SQLite gave while opening or migrating the store (a corrupt
 * file, one it cannot open or write), or `err` unchanged when it is not about the file.
 */
export function openRefusalOf(err: unknown, file: string): unknown {
  if (err instanceof StoreConfigError) return err;
  const e = err as { code?: unknown; message?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : '';
  const said = `${code}: ${typeof e?.message === 'string' ? e.message : String(err)}`;
  if (code.startsWith('SQLITE_CORRUPT'))
    return new StoreConfigError(
      `the store ${file} is corrupt (${said}): restore it from a backup (${RUNBOOK}), or move it away to start an empty store`,
    );
  if (code === 'SQLITE_NOTADB')
    return new StoreConfigError(
      `${file} is not a SQLite database (${said}): check that SQLITE_PATH names the scheduler's store, or move the file away`,
    );
  if (code.startsWith('SQLITE_CANTOPEN') || code.startsWith('SQLITE_PERM') || code.startsWith('SQLITE_READONLY') || code === 'SQLITE_AUTH')
    return new StoreConfigError(
      `the store ${file} cannot be opened for writing (${said}): check that its directory exists and that this process may read and write it and its -wal, -shm and .lock files`,
    );
  if (code === 'SQLITE_FULL')
    return new StoreConfigError(`the store ${file} cannot be written (${said}): free space on its volume, then start again`);
  if (code.startsWith('SQLITE_IOERR'))
    return new StoreConfigError(`the store ${file} cannot be read or written (${said}): check its volume (dmesg), then start again`);
  return err;
}

function accessible(p: string, mode: number): boolean {
  try {
    fs.accessSync(p, mode);
    return true;
  } catch {
    return false;
  }
}

function startsWithHeader(file: string, size: number): boolean {
  if (size < HEADER_BYTES) return false;
  const fd = fs.openSync(file, 'r');
  try {
    const head = Buffer.alloc(SQLITE_HEADER.length);
    fs.readSync(fd, head, 0, head.length, 0);
    return head.equals(SQLITE_HEADER);
  } finally {
    fs.closeSync(fd);
  }
}
