/**
 * auditScan — inputs: now, overdueBefore (epoch ms), limit. Read-only. Output: waiting tasks
 * (SCHEDULED, PENDING, RETRYING) due before `overdueBefore` — they should have run already — and
 * RUNNING attempts whose lease ended before `now`, each at most `limit`, oldest first, with totals
 * (four queries; the totals may be a moment apart from the lists). Changes nothing.
 */
import { WAITING_STATES } from '../../../domain/task';
import { AuditScan } from '../../store';
import type { MongoCollections } from '../collections';
import { DUE_FIELDS, dueEntryFromDoc } from '../documents';

export async function auditScan(c: MongoCollections, now: number, overdueBefore: number, limit: number): Promise<AuditScan> {
  const overdueFilter = { state: { $in: [...WAITING_STATES] }, due_at: { $lt: overdueBefore } };
  const leaseFilter = { state: 'RUNNING', lease_expires_at: { $lt: now } };
  const [overdue, overdueTotal, leases, expiredLeasesTotal] = await Promise.all([
    c.tasks.find(overdueFilter, { projection: DUE_FIELDS }).sort({ due_at: 1 }).limit(limit).toArray(),
    c.tasks.countDocuments(overdueFilter),
    c.tasks
      .find(leaseFilter, { projection: { _id: 1, attempts: 1, worker_id: 1, lease_expires_at: 1 } })
      .sort({ lease_expires_at: 1 })
      .limit(limit)
      .toArray(),
    c.tasks.countDocuments(leaseFilter),
  ]);
  return {
    overdue: overdue.map(dueEntryFromDoc),
    overdueTotal,
    expiredLeases: leases.map((d) => ({ taskId: d._id, attempt: d.attempts, workerId: d.worker_id, leaseExpiresAt: d.lease_expires_at as number })),
    expiredLeasesTotal,
    // Workflows are not stored by this adapter yet, so no BLOCKED workflow task can be in limbo.
    blockedLimbo: [],
    blockedLimboTotal: 0,
  };
}
