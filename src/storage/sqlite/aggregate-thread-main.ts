/**
 * Entry point of the SQLite aggregate-reads thread (worker_threads): its own read connection runs
 * the scans of `ops/aggregates.ts` (counts, audit), so a scan of millions of rows never blocks the
 * event loop.
 * WAL readers do not block the writer. Messages: `{id, op, args}` → `{id, ok, result | error}`;
 * `{op: 'close'}`.
 *
 * The thread runs at nice 10 (Linux keeps a nice value per thread: setpriority(2), "BUGS"): its
 * scans are background work, so on a busy machine the writer and the event loop get the CPU first
 * (CFS weight 110 against 1024 for nice 0) and a count of ten million rows stretches out instead
 * of taking a core from dispatch. Where the call is refused, the thread keeps the normal priority.
 */
import os from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { openConnection } from './connection';
import { AggregateName, prepareAggregates } from './ops/aggregates';
import { threadErrorOf } from './thread-errors';

/** Nice value of this thread (0 normal, 19 lowest). */
const AGGREGATE_THREAD_NICE = 10;

const port = parentPort;
if (port) {
  try {
    os.setPriority(AGGREGATE_THREAD_NICE);
  } catch {
    // not permitted or not supported: normal priority
  }
  const { file } = workerData as { file: string };
  const db = openConnection(file, { fileMustExist: true });
  const ops = prepareAggregates(db);
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
      port.postMessage({ id: req.id, ok: false, error: threadErrorOf(err) });
    }
  });
}
