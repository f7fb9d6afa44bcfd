/**
 * auditScan — inputs: now, overdueBefore (epoch ms), limit. Read-only. Output: waiting tasks
 * (SCHEDULED, PENDING, RETRYING) due before `overdueBefore` — they should have run already —, RUNNING
 * attempts whose lease ended before `now`, and BLOCKED workflow tasks whose upstreams are all
 * terminal (in limbo: must never exist), each at most `limit`, oldest first, with totals.
 * Guarantee: one statement on the pool (so one snapshot), committed data only; changes nothing
 * (repairs are the caller's). Overdue: one range scan of `tasks_waiting_due` per partition, each
 * stopping after `limit` rows, merged; expired leases through `tasks_running_lease`.
 */
import type { Db } from '../db';
import type { AuditScan } from '../../store';
import { DUE_COLUMNS, dueEntryFromRow, TaskRow } from '../../sql/row-mapping';
import { TERMINAL_STATES } from '../../../domain/task';
import { sqlNotStates, sqlState } from '../../sql/state-sql';
import { WAITING } from './load-due';

/**
 * Overdue waiting tasks of each partition: a range scan of `tasks_waiting_due (partition, due_at,
 * seq)` per partition (its predicate is the waiting states, written as it is), stopping after
 * `limit` rows; the partitions are the store's (`meta`).
 */
const PARTITIONS = `generate_series(0, (SELECT value::int FROM meta WHERE key = 'partitions') - 1) AS p(n)`;

const OVERDUE = `SELECT o.* FROM ${PARTITIONS}, LATERAL (
    SELECT ${DUE_COLUMNS} FROM tasks WHERE partition = p.n AND ${WAITING} AND due_at < $2 ORDER BY due_at, seq LIMIT $3) o`;

const OVERDUE_TOTAL = `(SELECT COALESCE(sum(c.n), 0)::int FROM ${PARTITIONS}, LATERAL (
    SELECT COUNT(*) AS n FROM tasks WHERE partition = p.n AND ${WAITING} AND due_at < $2) c)`;

const LIMBO = `FROM tasks t WHERE t.state = ${sqlState('BLOCKED')} AND t.workflow_id IS NOT NULL AND NOT EXISTS (
    SELECT 1 FROM workflow_edges e JOIN tasks u ON u.id = e.upstream_id
    WHERE e.downstream_id = t.id AND ${sqlNotStates([...TERMINAL_STATES], 'u.state')})`;

const AUDIT = `
  SELECT
    (SELECT COALESCE(json_agg(o ORDER BY o.due_at, o.seq), '[]'::json) FROM (
       ${OVERDUE} ORDER BY o.due_at, o.seq LIMIT $3) o) AS overdue,
    ${OVERDUE_TOTAL} AS overdue_total,
    (SELECT COALESCE(json_agg(l ORDER BY l.lease_expires_at, l.seq), '[]'::json) FROM (
       SELECT id, attempts, worker_id, lease_expires_at, seq FROM tasks
       WHERE state = ${sqlState('RUNNING')} AND lease_expires_at < $1 ORDER BY lease_expires_at, seq LIMIT $3) l) AS leases,
    (SELECT COUNT(*)::int FROM tasks WHERE state = ${sqlState('RUNNING')} AND lease_expires_at < $1) AS leases_total,
    (SELECT COALESCE(json_agg(b.id ORDER BY b.seq), '[]'::json) FROM (SELECT t.id, t.seq ${LIMBO} ORDER BY t.seq LIMIT $3) b) AS limbo,
    (SELECT COUNT(*)::int ${LIMBO}) AS limbo_total`;

interface AuditRow {
  overdue: TaskRow[];
  overdue_total: number;
  leases: Array<{ id: string; attempts: number; worker_id: string | null; lease_expires_at: number }>;
  leases_total: number;
  limbo: string[];
  limbo_total: number;
}

/** What the auditor should look at (see the file header). */
export async function auditScan(db: Db, now: number, overdueBefore: number, limit: number): Promise<AuditScan> {
  const { rows } = await db.query<AuditRow>(AUDIT, [now, overdueBefore, limit]);
  const r = rows[0];
  return {
    overdue: r.overdue.map(dueEntryFromRow),
    overdueTotal: r.overdue_total,
    expiredLeases: r.leases.map((l) => ({ taskId: l.id, attempt: l.attempts, workerId: l.worker_id, leaseExpiresAt: l.lease_expires_at })),
    expiredLeasesTotal: r.leases_total,
    blockedLimbo: r.limbo,
    blockedLimboTotal: r.limbo_total,
  };
}
