/**
 * Entry point of the SQLite aggregate-reads thread (worker_threads): its own read connection runs
 * the scans of `ops/aggregates.ts` (counts, audit), so a scan of millions of rows never blocks the
 * event loop.
 * WAL readers do not block the writer. Messages: `{id, op, args}` → `{id, ok, result | error}`;
 * `{op: 'close'}`.
 *
 * The scans' thread runs at nice 10 (Linux keeps a nice value per thread: setpriority(2), "BUGS"):
 * its scans are background work, so on a busy machine the writer and the event loop get the CPU
 * first (CFS weight 110 against 1024 for nice 0) and a count of ten million rows stretches out
 * instead of taking a core from dispatch. Where the call is refused, the thread keeps the normal
 * priority. The store's WAL checkpoints run on a second thread of this module at nice 0
 * (`workerData.nice`): one queued behind a scan on a niced thread let the WAL grow (sqlite-store.ts).
 */
import os from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { openConnection } from './connection';
import { AggregateName, prepareAggregates } from './ops/aggregates';
import { threadErrorOf } from './thread-errors';

/**
 * Page cache of this thread's connection (KiB, SQLite's negative `cache_size`): 2 MiB, not the
 * writer's 64 MiB (connection.ts). Its counts stream through an index once and the
 * checkpoints copy WAL frames: neither reads a page twice. Measured on 5 million tasks: a count
 * filled the 64 MiB cache (the process's RSS +66 MB) and took 272–284 ms either way.
 */
const AGGREGATE_CACHE_KIB = 2048;

/** Nice value of the scans' thread unless `workerData.nice` says otherwise (0 normal, 19 lowest). */
const AGGREGATE_THREAD_NICE = 10;

const port = parentPort;
if (port) {
  const { file, nice = AGGREGATE_THREAD_NICE } = workerData as { file: string; nice?: number };
  try {
    if (nice !== 0) os.setPriority(nice);
  } catch {
    // not permitted or not supported: normal priority
  }
  const db = openConnection(file, { fileMustExist: true, cacheKib: AGGREGATE_CACHE_KIB });
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
