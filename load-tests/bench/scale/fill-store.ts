/**
 * Builds the scale scenario's store: a SQLite file holding `count` SCHEDULED `noop` tasks due over
 * the next `spreadHours` (starting `startAfterMs` from now, so none comes due during a run), written
 * with the store's own migrations and insert operation (ops/insert-tasks.ts), in transactions of
 * 50,000 rows with `synchronous=OFF` (this is fixture generation, not the measured path: the
 * service reopens the file with its own settings). Ids are UUID v7 of increasing fake creation
 * times, as real submissions over time would be.
 */
import { performance } from 'node:perf_hooks';
import { partitionOf } from '../../../src/domain/partition';
import { NewTask } from '../../../src/domain/task';
import { uuidv7 } from '../../../src/domain/task-id';
import { openConnection } from '../../../src/storage/sqlite/connection';
import { prepareInsertTasks } from '../../../src/storage/sqlite/ops/insert-tasks';
import { SqliteStore } from '../../../src/storage/sqlite/sqlite-store';

export interface FillSpec {
  file: string;
  count: number;
  partitions: number;
  /** Due times spread evenly over this many hours. */
  spreadHours: number;
  /** The first due time, from now (ms). */
  startAfterMs: number;
  /** The first due time as epoch ms (overrides `startAfterMs`). */
  firstDueAt?: number;
  /** Called after each transaction with the rows written so far. */
  progress?: (done: number) => void;
}

const ROWS_PER_TRANSACTION = 50_000;

/** Fills `spec.file` (created and migrated if missing); resolves with the time it took (ms). */
export async function fillStore(spec: FillSpec): Promise<number> {
  const t0 = performance.now();
  const store = new SqliteStore(spec.file, { writerThread: false });
  await store.open(spec.partitions);
  await store.close();
  const db = openConnection(spec.file);
  try {
    db.pragma('synchronous = OFF');
    db.pragma('cache_size = -524288');
    const insert = prepareInsertTasks(db);
    const now = Date.now();
    const firstDue = spec.firstDueAt ?? now + spec.startAfterMs;
    const step = (spec.spreadHours * 3_600_000) / Math.max(1, spec.count);
    const createdFrom = now - spec.count; // one fake millisecond per task, ending now
    for (let done = 0; done < spec.count;) {
      const n = Math.min(ROWS_PER_TRANSACTION, spec.count - done);
      const tasks: NewTask[] = new Array(n);
      for (let i = 0; i < n; i++) {
        const k = done + i;
        const id = uuidv7(createdFrom + k);
        const dueAt = Math.floor(firstDue + k * step);
        tasks[i] = {
          id,
          partition: partitionOf(id, spec.partitions),
          taskType: 'noop',
          payload: { n: k },
          priority: 'medium',
          queue: 'default',
          tenantId: `tenant-${k % 16}`,
          correlationId: null,
          idempotencyKey: null,
          metadata: {},
          retry: { maxRetries: 3, backoff: 'exponential', delaySeconds: 1 },
          timeoutSeconds: 30,
          scheduledAt: dueAt,
          dueAt,
          state: 'SCHEDULED',
          createdAt: createdFrom + k,
        };
      }
      db.transaction(() => insert(tasks))();
      done += n;
      spec.progress?.(done);
    }
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
  return performance.now() - t0;
}
