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
 * A window read walks the due index of one partition from its low end and reads each due row
 * once, and those rows were written moments before, so they are still in the OS page cache when
 * they miss this one. With 64 MiB here and on the main connection, the service's RSS rose 485 →
 * 600 MB over the first 40 minutes of a soak hour with the JS heap flat (load-tests/README, soak
 * hours 5 and 6).
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
