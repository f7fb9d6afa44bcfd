/**
 * auditScan — inputs: now, overdueBefore (epoch ms), limit. Read-only. Output: waiting tasks
 * (SCHEDULED, PENDING, RETRYING) due before `overdueBefore` — they should have run already — and
 * RUNNING attempts whose lease ended before `now`, and BLOCKED workflow tasks (not queued cron
 * instances, which wait on their previous instance, not on edges) whose upstreams are all
 * terminal (in limbo: must never exist), each at most `limit`, oldest first, with totals.
 * Guarantee: reads committed data only; changes nothing (repairs are the caller's).
 */
import type Database from 'better-sqlite3';
import { AuditScan } from '../../store';
import { DUE_COLUMNS, dueEntryFromRow, TaskRow } from '../row-mapping';

export function prepareAuditScan(db: Database.Database): (now: number, overdueBefore: number, limit: number) => AuditScan {
  const overdue = db.prepare(`
    SELECT ${DUE_COLUMNS} FROM tasks
    WHERE state IN ('SCHEDULED', 'PENDING', 'RETRYING') AND due_at < ? ORDER BY due_at LIMIT ?`);
  const overdueCount = db.prepare(`SELECT COUNT(*) FROM tasks WHERE state IN ('SCHEDULED', 'PENDING', 'RETRYING') AND due_at < ?`).pluck();
  const leases = db.prepare(`
    SELECT id, attempts, worker_id, lease_expires_at FROM tasks
    WHERE state = 'RUNNING' AND lease_expires_at < ? ORDER BY lease_expires_at LIMIT ?`);
  const leaseCount = db.prepare(`SELECT COUNT(*) FROM tasks WHERE state = 'RUNNING' AND lease_expires_at < ?`).pluck();
  const LIMBO = `FROM tasks t WHERE t.state = 'BLOCKED' AND t.workflow_id IS NOT NULL AND NOT EXISTS (
      SELECT 1 FROM workflow_edges e JOIN tasks u ON u.id = e.upstream_id
      WHERE e.downstream_id = t.id AND u.state NOT IN ('SUCCEEDED', 'FAILED', 'DEAD', 'CANCELLED'))`;
  const limbo = db.prepare(`SELECT t.id ${LIMBO} ORDER BY t.seq LIMIT ?`).pluck();
  const limboCount = db.prepare(`SELECT COUNT(*) ${LIMBO}`).pluck();
  return (now, overdueBefore, limit) => ({
    overdue: (overdue.all(overdueBefore, limit) as TaskRow[]).map(dueEntryFromRow),
    overdueTotal: overdueCount.get(overdueBefore) as number,
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
