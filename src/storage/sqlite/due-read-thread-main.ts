/**
 * Entry point of the SQLite window-reads thread (worker_threads): its own read connection answers
 * the partition owners' `loadDue` (ops/load-due.ts), so a read that steps over a herd of index
 * entries never blocks the event loop (see due-reader.ts). A WAL reader: it never blocks the
 * writer. Messages: `{id, op: 'loadDue', args: [partition, until, limit]}` →
 * `{id, ok, result | error}`; `{op: 'close'}`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openConnection } from './connection';
import { prepareLoadDue } from './ops/load-due';
import { threadErrorOf } from './thread-errors';

/**
 * Page cache of this thread's connection (KiB): 8 MiB, not the writer's 64 MiB (connection.ts).
 * A window read walks the due index of one partition and reads each due row once, and under a
 * steady flow of writes the cache seldom outlives a read: SQLite's pager drops a connection's
 * cache when it begins a read after another connection committed (pager.c,
 * `pagerBeginReadTransaction`). Measured: no cost on the herd, backlog or end-to-end figures
 * (load-tests/README, soak hour 6), and no change of the service's RSS over the soak hour either.
 */
const DUE_READ_CACHE_KIB = 8192;

const port = parentPort;
if (port) {
  const { file } = workerData as { file: string };
  const db = openConnection(file, { fileMustExist: true, cacheKib: DUE_READ_CACHE_KIB });
  const loadDue = prepareLoadDue(db);
  port.on('message', (req: { id: number; op: string; args?: unknown[] }) => {
    if (req.op === 'close') {
      db.close();
      port.postMessage({ id: req.id, ok: true, result: null });
      port.close();
      return;
    }
    try {
      if (req.op !== 'loadDue') throw new Error(`unknown window read ${req.op}`);
      const [partition, until, limit] = req.args as [number, number, number];
      port.postMessage({ id: req.id, ok: true, result: loadDue(partition, until, limit) });
    } catch (err) {
      port.postMessage({ id: req.id, ok: false, error: threadErrorOf(err) });
    }
  });
}
