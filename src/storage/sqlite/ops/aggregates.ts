/**
 * Aggregate reads (no writes) — scans whose cost grows with the table, so a file store runs them
 * on their own thread (aggregate-reader.ts), never on the event loop that serves HTTP and actors.
 * countByState — inputs: none. Output: task count per state (every state present, 0 when none),
 * from one read transaction (a consistent snapshot): `COUNT(*)` of the table, which SQLite answers
 * by walking the pages of its smallest index and adding their cell counts without decoding a row,
 * and a range count on `tasks_state_seq` for every state but the one that was largest at the last
 * call, whose count is the difference. Cost: the page walk plus the entries of the smaller states,
 * well under one `GROUP BY state`, which decodes every index entry.
 * countWaitingByTenant — inputs: none. Output: tenant → tasks SCHEDULED, PENDING, RETRYING or
 * BLOCKED (the backpressure caps' counts; tenants with none are absent). One statement.
 * auditScan — see audit.ts.
 * checkpoint — inputs: none. A PASSIVE WAL checkpoint from this connection: copies committed pages
 * back into the database file without blocking the writer or readers (it skips what they still
 * use). Output: {busy, log, checkpointed} as SQLite reports them. The writer's own automatic
 * checkpoint is only a safety net (writer-thread-main.ts), so a commit never carries one.
 */
import type Database from 'better-sqlite3';
import { TASK_STATES, TaskState } from '../../../domain/task';
import { DEPTH_STATES } from '../../../domain/state-machine';
import { sqlStates } from '../../sql/state-sql';
import { prepareAuditScan } from './audit';

export function prepareAggregates(db: Database.Database) {
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
  const waiting = db.prepare(`
    SELECT tenant_id, COUNT(*) AS n FROM tasks WHERE ${sqlStates(DEPTH_STATES)} GROUP BY tenant_id`);
  return {
    countByState(): Record<TaskState, number> {
      return countSnapshot();
    },
    countWaitingByTenant(): Record<string, number> {
      return Object.fromEntries((waiting.all() as Array<{ tenant_id: string; n: number }>).map((r) => [r.tenant_id, r.n]));
    },
    auditScan,
    checkpoint(): { busy: number; log: number; checkpointed: number } {
      const [r] = db.pragma('wal_checkpoint(PASSIVE)') as Array<{ busy: number; log: number; checkpointed: number }>;
      return r;
    },
  };
}

export type Aggregates = ReturnType<typeof prepareAggregates>;
export type AggregateName = keyof Aggregates;
