/**
 * Entry point of the SQLite writer thread (worker_threads). It owns the store's only writing
 * connection and runs every write operation through {@link GroupCommit}: requests that arrive while
 * a transaction commits are batched into the next one, and each is answered after its commit.
 * Messages: `{id, op, args}` → `{id, ok, result | error}`; `{id, op: 'stats'}`; `{op: 'close'}`.
 *
 * After each commit it checks that the file at the store's path is still the one it opened (device
 * and inode): a file deleted or replaced under the service keeps taking writes through the open
 * handle, and those writes are in no file anyone will read again, so their callers get a
 * {@link STORE_FILE_MOVED} error instead of a result.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openConnection } from './connection';
import { volumeBytesOf, walBoundBytes, walBoundPages } from './wal-bound';
import { GroupCommit } from './group-commit';
import { threadErrorOf } from './thread-errors';
import { isDeferred, prepareWriteOps, rowsOf, WriteOpName } from './write-ops';
import { assertSameFile, FileIdentity } from './store-faults';
import { newSpaceBytes } from './young-generation';

interface Request {
  id: number;
  op: WriteOpName | 'stats' | 'close';
  args?: unknown[];
}

const port = parentPort;
if (port) {
  const { file, identity, wal } = workerData as { file: string; identity: FileIdentity | null; wal: FileIdentity | null };
  const db = openConnection(file, { fileMustExist: true });
  // The copying is done by the checkpoint thread (SqliteStore.checkpoint, every second from
  // bootstrap): a checkpoint carried out here holds the next commit (and every caller waiting on
  // it) for the whole copy. But SQLite starts the WAL over only when a write transaction begins
  // with every frame copied back, and under steady writes some commit always lands while another
  // thread's checkpoint runs, so the WAL grew (to 245 MB in 20 minutes of the soak at 6,760
  // tasks/s); reads slow down as it grows ("the time needed to check the WAL file is proportional
  // to the size of the WAL file", sqlite.org/wal.html). Past 64 MiB the writer checkpoints
  // itself (less on a small volume): only the frames written since the thread's last pass are left to copy, and no commit
  // can land in between, so the next transaction starts the WAL over.
  // 64 MiB on a volume of 1 GiB or more, a sixteenth of a smaller one (wal-bound.ts): the WAL
  // file is cut back to the same size.
  const walPages = walBoundPages(volumeBytesOf(file));
  db.pragma(`wal_autocheckpoint = ${walPages}`);
  db.pragma(`journal_size_limit = ${walBoundBytes(walPages)}`);
  const ops = prepareWriteOps(db);
  const commit = new GroupCommit(db, identity ? { afterCommit: () => assertSameFile(file, identity, wal) } : {});
  port.on('message', (req: Request) => {
    if (req.op === 'close') {
      commit.close();
      db.close();
      // The flushed callers are answered from promise callbacks: let them go out first.
      setImmediate(() => {
        port.postMessage({ id: req.id, ok: true, result: null });
        port.close();
      });
      return;
    }
    if (req.op === 'stats') {
      port.postMessage({ id: req.id, ok: true, result: { ...commit.stats, newSpaceBytes: newSpaceBytes() } });
      return;
    }
    const fn = ops[req.op] as ((...a: unknown[]) => unknown) | undefined;
    if (!fn) {
      port.postMessage({ id: req.id, ok: false, error: { name: 'Error', message: `unknown write op ${req.op}` } });
      return;
    }
    commit
      .run(() => fn(...(req.args ?? [])), rowsOf(req.op, req.args ?? []), isDeferred(req.op))
      .then(
        (result) => port.postMessage({ id: req.id, ok: true, result }),
        (err: unknown) => port.postMessage({ id: req.id, ok: false, error: threadErrorOf(err) }),
      );
  });
}
