/**
 * auditScan — inputs: now, overdueBefore (epoch ms), limit. Read-only. Output: waiting tasks
 * (SCHEDULED, PENDING, RETRYING) due before `overdueBefore` — they should have run already — and
 * RUNNING attempts whose lease ended before `now`, and BLOCKED workflow tasks whose upstreams are
 * all terminal (in limbo: must never exist; tasks held by an insert under way are not waiting on
 * edges and are left out, as are queued cron instances; an upstream whose end is still being
 * applied counts as not terminal), each at most `limit`, oldest first (overdue: due time, then
 * seq), with totals (separate queries; the totals may be a moment apart from the lists). The
 * limbo check reads every BLOCKED workflow task's id and upstream ids, then the states of those
 * upstreams.
 * Changes nothing.
 */
import { TERMINAL_STATES, WAITING_STATES } from '../../../domain/task';
import { AuditScan } from '../../store';
import type { MongoCollections } from '../collections';
import { DUE_FIELDS, dueEntryFromDoc } from '../documents';
import { chunks } from './workflow-progress';

export async function auditScan(c: MongoCollections, now: number, overdueBefore: number, limit: number): Promise<AuditScan> {
  const overdueFilter = { state: { $in: [...WAITING_STATES] }, due_at: { $lt: overdueBefore } };
  const leaseFilter = { state: 'RUNNING', lease_expires_at: { $lt: now } };
  const [overdue, overdueTotal, leases, expiredLeasesTotal, limbo] = await Promise.all([
    c.tasks.find(overdueFilter, { projection: DUE_FIELDS }).sort({ due_at: 1, seq: 1 }).limit(limit).toArray(),
    c.tasks.countDocuments(overdueFilter),
    c.tasks
      .find(leaseFilter, { projection: { _id: 1, attempts: 1, worker_id: 1, lease_expires_at: 1 } })
      .sort({ lease_expires_at: 1 })
      .limit(limit)
      .toArray(),
    c.tasks.countDocuments(leaseFilter),
    blockedLimbo(c),
  ]);
  return {
    overdue: overdue.map(dueEntryFromDoc),
    overdueTotal,
    expiredLeases: leases.map((d) => ({
      taskId: d._id,
      attempt: d.attempts,
      workerId: d.worker_id,
      leaseExpiresAt: d.lease_expires_at as number,
    })),
    expiredLeasesTotal,
    blockedLimbo: limbo.slice(0, limit),
    blockedLimboTotal: limbo.length,
  };
}

/**
 * Ids of BLOCKED workflow tasks (not held) whose upstreams are all terminal or gone, in seq order.
 * An upstream whose end is still being applied (`wf_done: false`: by the write in flight, or by the
 * repair pass after a crash) counts as not yet terminal: its downstream tasks are about to be
 * released or cancelled, so they are not in limbo.
 */
async function blockedLimbo(c: MongoCollections): Promise<string[]> {
  const blocked = await c.tasks
    .find({ state: 'BLOCKED', workflow_id: { $type: 'string' }, wf_hold: { $exists: false } }, { projection: { _id: 1, upstream_ids: 1 } })
    .sort({ seq: 1 })
    .toArray();
  if (blocked.length === 0) return [];
  const upstreamIds = [...new Set(blocked.flatMap((b) => b.upstream_ids ?? []))];
  const open = new Set<string>();
  for (const part of chunks(upstreamIds)) {
    const unsettled = { _id: { $in: part }, $or: [{ state: { $nin: [...TERMINAL_STATES] } }, { wf_done: false }] };
    const docs = await c.tasks.find(unsettled, { projection: { _id: 1 } }).toArray();
    for (const d of docs) open.add(d._id);
  }
  return blocked.filter((b) => !(b.upstream_ids ?? []).some((u) => open.has(u))).map((b) => b._id);
}
