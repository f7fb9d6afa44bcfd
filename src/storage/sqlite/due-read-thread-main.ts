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

const port = parentPort;
if (port) {
  const { file } = workerData as { file: string };
  const db = openConnection(file, { fileMustExist: true });
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
