/**
 * Entry point of the SQLite aggregate-reads thread (worker_threads): its own read connection runs
 * the scans of `ops/aggregates.ts`, so a count over millions of rows never blocks the event loop.
 * WAL readers do not block the writer. Messages: `{id, op, args}` → `{id, ok, result | error}`;
 * `{op: 'close'}`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openConnection } from './connection';
import { AggregateName, prepareAggregates } from './ops/aggregates';

const port = parentPort;
if (port) {
  const db = openConnection((workerData as { file: string }).file);
  const ops = prepareAggregates(db);
  port.on('message', (req: { id: number; op: AggregateName | 'close' }) => {
    if (req.op === 'close') {
      db.close();
      port.postMessage({ id: req.id, ok: true, result: null });
      port.close();
      return;
    }
    try {
      const fn = ops[req.op] as (() => unknown) | undefined;
      if (!fn) throw new Error(`unknown aggregate ${String(req.op)}`);
      port.postMessage({ id: req.id, ok: true, result: fn() });
    } catch (err) {
      const e = err as Error & { code?: string };
      port.postMessage({ id: req.id, ok: false, error: { name: e.name, message: e.message, code: e.code } });
    }
  });
}
