/**
 * auditScan — inputs: now, overdueBefore (epoch ms), limit. Read-only. Output: waiting tasks
 * (SCHEDULED, PENDING, RETRYING) due before `overdueBefore` — they should have run already — and
 * RUNNING attempts whose lease ended before `now`, and BLOCKED workflow tasks (not queued cron
 * instances, which wait on their previous instance, not on edges) whose upstreams are all
 * terminal (in limbo: must never exist), each at most `limit`, oldest first, with totals.
 * Guarantee: reads committed data only; changes nothing (repairs are the caller's).
 * Cost: the overdue part is one range scan on each waiting-task index (`tasks_scheduled_due`,
 * `tasks_ready_due`, in due order since migration 011; each reads only overdue entries, at most
 * `limit` rows), so millions of tasks due later cost nothing;
 * a scan by state would read every waiting task.
 * File stores run it on the aggregate-reads thread.
 */
import type Database from 'better-sqlite3';
import { AuditScan } from '../../store';
import { DUE_COLUMNS, dueEntryFromRow, TaskRow } from '../../sql/row-mapping';
import { mergeByDue, WAITING_INDEXES } from './load-due';
import { TERMINAL_STATES } from '../../../domain/task';
import { sqlNotStates } from '../../sql/state-sql';

export function prepareAuditScan(db: Database.Database): (now: number, overdueBefore: number, limit: number) => AuditScan {
  const waiting = WAITING_INDEXES.map(({ index, states }) => `tasks INDEXED BY ${index} WHERE ${states} AND due_at < ?`);
  const overdueIn = waiting.map((w) => db.prepare(`SELECT ${DUE_COLUMNS} FROM ${w} ORDER BY due_at, seq LIMIT ?`));
  const overdueCountIn = waiting.map((w) => db.prepare(`SELECT COUNT(*) FROM ${w}`).pluck());
  const overdue = (before: number, limit: number): TaskRow[] =>
    mergeByDue(
      overdueIn.map((s) => s.all(before, limit) as TaskRow[]),
      limit,
    );
  const overdueCount = (before: number): number => overdueCountIn.reduce((n, s) => n + (s.get(before) as number), 0);
  const leases = db.prepare(`
    SELECT id, attempts, worker_id, lease_expires_at FROM tasks
    WHERE state = 'RUNNING' AND lease_expires_at < ? ORDER BY lease_expires_at LIMIT ?`);
  const leaseCount = db.prepare(`SELECT COUNT(*) FROM tasks WHERE state = 'RUNNING' AND lease_expires_at < ?`).pluck();
  const LIMBO = `FROM tasks t WHERE t.state = 'BLOCKED' AND t.workflow_id IS NOT NULL AND NOT EXISTS (
      SELECT 1 FROM workflow_edges e JOIN tasks u ON u.id = e.upstream_id
      WHERE e.downstream_id = t.id AND ${sqlNotStates([...TERMINAL_STATES], 'u.state')})`;
  const limbo = db.prepare(`SELECT t.id ${LIMBO} ORDER BY t.seq LIMIT ?`).pluck();
  const limboCount = db.prepare(`SELECT COUNT(*) ${LIMBO}`).pluck();
  return (now, overdueBefore, limit) => ({
    overdue: overdue(overdueBefore, limit).map(dueEntryFromRow),
    overdueTotal: overdueCount(overdueBefore),
    expiredLeases: (leases.all(now, limit) as Array<TaskRow & { lease_expires_at: number }>).map((r) => ({
      taskId: r.id,
      attempt: r.attempts,
      workerId: r.worker_id,
      leaseExpiresAt: r.lease_expires_at,
    })),
    expiredLeasesTotal: leaseCount.get(now) as number,
    blockedLimbo: limbo.all(limit) as string[],
    blockedLimboTotal: limboCount.get() as number,
  });
}
