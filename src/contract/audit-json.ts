import { AuditScan } from '../storage/store';

/** One finding of the audit: how many there are and what the audit does about them. */
interface AuditFinding {
  count: number;
  repair: string;
}

/** The audit report (`GET /api/v1/audit`): at most 100 ids or attempts per finding. */
export interface AuditView {
  checked_at: string;
  overdue: AuditFinding & { threshold_ms: number; task_ids: string[] };
  expired_leases: AuditFinding & {
    attempts: Array<{ task_id: string; attempt: number; worker_id: string | null; lease_expired_at: string }>;
  };
  blocked_limbo: AuditFinding & { task_ids: string[] };
}

/**
 * The audit report of one scan (`GET /api/v1/audit`; the periodic audit pass discards it): each
 * finding's count, at most 100 ids of it, and what the audit does about it.
 * @param now the instant of the scan (epoch ms)
 * @param overdueMs how far past due a waiting task counts as overdue (`auditOverdueMs`, ms)
 */
export function auditJson(scan: AuditScan, now: number, overdueMs: number): AuditView {
  return {
    checked_at: new Date(now).toISOString(),
    overdue: {
      count: scan.overdueTotal,
      threshold_ms: overdueMs,
      task_ids: scan.overdue.map((e) => e.id),
      repair: 'offered to their partition owners again',
    },
    expired_leases: {
      count: scan.expiredLeasesTotal,
      attempts: scan.expiredLeases.map((l) => ({
        task_id: l.taskId,
        attempt: l.attempt,
        worker_id: l.workerId,
        lease_expired_at: new Date(l.leaseExpiresAt).toISOString(),
      })),
      repair: 'recorded as worker_lost by the lease sweeper within leaseMs / 2',
    },
    blocked_limbo: {
      count: scan.blockedLimboTotal,
      task_ids: scan.blockedLimbo,
      repair: 'none: a BLOCKED workflow task whose upstreams are all terminal is a bug; report it',
    },
  };
}
