/**
 * Entry point of the SQLite aggregate-reads thread (worker_threads): its own read connection runs
 * the scans of `ops/aggregates.ts` (counts, audit), so a scan of millions of rows never blocks the
 * event loop.
 * WAL readers do not block the writer. Messages: `{id, op, args}` → `{id, ok, result | error}`;
 * `{op: 'close'}`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openConnection } from './connection';
import { AggregateName, prepareAggregates } from './ops/aggregates';

const port = parentPort;
if (port) {
  const { file, partitions } = workerData as { file: string; partitions: number };
  const db = openConnection(file);
  const ops = prepareAggregates(db, partitions);
  port.on('message', (req: { id: number; op: AggregateName | 'close'; args?: unknown[] }) => {
    if (req.op === 'close') {
      db.close();
      port.postMessage({ id: req.id, ok: true, result: null });
      port.close();
      return;
    }
    try {
      const fn = ops[req.op] as ((...args: unknown[]) => unknown) | undefined;
      if (!fn) throw new Error(`unknown aggregate ${String(req.op)}`);
      port.postMessage({ id: req.id, ok: true, result: fn(...(req.args ?? [])) });
    } catch (err) {
      const e = err as Error & { code?: string };
      port.postMessage({ id: req.id, ok: false, error: { name: e.name, message: e.message, code: e.code } });
    }
  });
}
