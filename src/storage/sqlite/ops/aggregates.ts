/**
 * Aggregate reads (no writes) — scans whose cost grows with the table, so a file store runs them
 * on their own thread (aggregate-reader.ts), never on the event loop that serves HTTP and actors.
 * countByState — inputs: none. Output: task count per state (every state present, 0 when none).
 * A store whose `seq` range spans at most `COUNT_WINDOW_SEQS` is counted in one read transaction
 * (a consistent snapshot): `COUNT(*)` of the table, which SQLite answers by walking the pages of
 * its smallest index and adding their cell counts without decoding a row, and a range count on
 * `tasks_state_seq` for every state but the one that was largest at the last call, whose count is
 * the difference. A larger store is counted window by window of `seq` (a range count per state on
 * `tasks_state_seq`, each window its own short read transaction), because a read transaction
 * pins the WAL: while it lasts no checkpoint copies past its snapshot and the WAL cannot restart,
 * so one count of 26 million tasks (seconds, on a thread at nice 10) let the WAL grow by
 * everything written meanwhile. Each window is exact at its own moment; a task that changes
 * state while the count runs may be counted in both states or neither (a gauge's error, at most
 * the transitions made during the count).
 * countWaitingByTenant — inputs: none. Output: tenant → tasks SCHEDULED, PENDING, RETRYING or
 * BLOCKED (the backpressure caps' counts; tenants with none are absent). One statement.
 * auditScan — see audit.ts.
 * checkpoint — inputs: none. A PASSIVE WAL checkpoint from this connection: copies committed pages
 * back into the database file without blocking the writer or readers (it skips what they still
 * use). Output: {busy, log, checkpointed} as SQLite reports them. The writer's own automatic
 * checkpoint is only a safety net (writer-thread-main.ts), so a commit never carries one.
 * truncateLog — inputs: none. A TRUNCATE checkpoint (https://sqlite.org/c3ref/wal_checkpoint_v2.html):
 * waits (the busy timeout) for the writer and the readers, copies every committed page back and
 * cuts the WAL file to zero bytes. Output: true when the file was cut, false when a reader or
 * writer kept it busy. Throws what SQLite throws (`SQLITE_FULL` when committed pages do not fit
 * in the database file). Only for a full volume (file-watch.ts): a refused write leaves its frames
 * in the WAL file past the last commit, and the file starts over only at a write, which a full
 * volume refuses, so without it the service's own log could keep the volume full for good.
 */
import type Database from 'better-sqlite3';
import { TASK_STATES, TaskState } from '../../../domain/task';
import { DEPTH_STATES } from '../../../domain/state-machine';
import { sqlStates } from '../../sql/state-sql';
import { prepareAuditScan } from './audit';

/** Widest `seq` range counted in one read transaction (so at most this many index entries each). */
export const COUNT_WINDOW_SEQS = 250_000;

/**
 * @param db a connection to a migrated store
 * @param countWindowSeqs widest `seq` range a count reads in one transaction (tests make it small)
 */
export function prepareAggregates(db: Database.Database, countWindowSeqs: number = COUNT_WINDOW_SEQS) {
  const auditScan = prepareAuditScan(db);
  const total = db.prepare(`SELECT COUNT(*) FROM tasks`).pluck();
  const inState = db.prepare(`SELECT COUNT(*) FROM tasks WHERE state = ?`).pluck();
  /** The state counted as the difference: the largest at the last call. */
  let largest: TaskState = 'SCHEDULED';
  const countSnapshot = db.transaction((): Record<TaskState, number> => {
    const out = Object.fromEntries(TASK_STATES.map((s) => [s, 0])) as Record<TaskState, number>;
    let others = 0;
    for (const s of TASK_STATES) {
      if (s === largest) continue;
      out[s] = inState.get(s) as number;
      others += out[s];
    }
    out[largest] = (total.get() as number) - others;
    largest = TASK_STATES.reduce((a, b) => (out[b] > out[a] ? b : a), largest);
    return out;
  });
  // Two statements: SQLite reads one MIN or MAX from the end of the b-tree, but not both at once.
  const minSeq = db.prepare(`SELECT MIN(seq) FROM tasks`).pluck();
  const maxSeq = db.prepare(`SELECT MAX(seq) FROM tasks`).pluck();
  const inStateWindow = db.prepare(`SELECT COUNT(*) FROM tasks WHERE state = ? AND seq >= ? AND seq < ?`).pluck();
  const countWindow = db.transaction((from: number, to: number, out: Record<TaskState, number>): void => {
    for (const s of TASK_STATES) out[s] += inStateWindow.get(s, from, to) as number;
  });
  /** Window by window of `seq`, each its own read transaction (see the header). */
  const countByWindows = (lo: number, hi: number): Record<TaskState, number> => {
    const out = Object.fromEntries(TASK_STATES.map((s) => [s, 0])) as Record<TaskState, number>;
    let from = lo;
    for (; from <= hi; from += countWindowSeqs) countWindow(from, from + countWindowSeqs, out);
    // Tasks added since the range was read (a few seconds' worth): one open-ended window.
    countWindow(from, Number.MAX_SAFE_INTEGER, out);
    return out;
  };
  const waiting = db.prepare(`
    SELECT tenant_id, COUNT(*) AS n FROM tasks WHERE ${sqlStates(DEPTH_STATES)} GROUP BY tenant_id`);
  return {
    countByState(): Record<TaskState, number> {
      const lo = minSeq.get() as number | null;
      const hi = maxSeq.get() as number | null;
      if (lo === null || hi === null || hi - lo < countWindowSeqs) return countSnapshot();
      return countByWindows(lo, hi);
    },
    countWaitingByTenant(): Record<string, number> {
      return Object.fromEntries((waiting.all() as Array<{ tenant_id: string; n: number }>).map((r) => [r.tenant_id, r.n]));
    },
    auditScan,
    checkpoint(): { busy: number; log: number; checkpointed: number } {
      const [r] = db.pragma('wal_checkpoint(PASSIVE)') as Array<{ busy: number; log: number; checkpointed: number }>;
      return r;
    },
    truncateLog(): boolean {
      const [r] = db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number }>;
      return r.busy === 0;
    },
  };
}

export type Aggregates = ReturnType<typeof prepareAggregates>;
export type AggregateName = keyof Aggregates;
