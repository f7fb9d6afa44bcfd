import { auditJson, AuditView } from '../contract/audit-json';
import type { Clock } from '../domain/clock';
import { lostAttemptCompletion } from '../domain/lost-attempt';
import type { SchedulerMetrics } from '../observability/metrics';
import type { Store } from '../storage/store';
import { describeFault, StoreFault, storeUnavailable } from '../storage/store-health';
import type { StoreUnavailableError } from '../domain/errors';

/** A store fault as `/readyz` shows it: what, where, since when (ISO 8601), and whether it ends by itself. */
export interface StoreFaultView {
  fault: string;
  target: string;
  cause: string;
  recoverable: boolean;
  since: string;
  /** One line: the fault, the file or server, the cause. */
  message: string;
}

function faultView(f: StoreFault): StoreFaultView {
  return {
    fault: f.kind,
    target: f.target,
    cause: f.cause,
    recoverable: f.recoverable,
    since: new Date(f.since).toISOString(),
    message: describeFault(f),
  };
}
import type { Config } from '../config';
import type { SchedulingGateway } from './ports';

/** Partition ownership as the cluster's lease component sees it (cluster mode). */
export interface OwnershipView {
  joined: boolean;
  owned: number[];
  fencing: number[];
  partitions: number;
}

export interface OperationsServiceDeps {
  store: Store;
  clock: Clock;
  config: Config;
  metrics: SchedulerMetrics;
  /** Overdue tasks found by the audit go back to their owners. */
  gateway: SchedulingGateway;
  /** Whether the task service still accepts submissions (false while shutting down). */
  accepting: () => boolean;
  /** Health of the Redis coordination (cluster mode); absent: Redis is not configured. */
  redisStatus?: () => 'up' | 'down';
}

/**
 * The operator's side of the scheduler: start-up recovery of orphaned attempts, the audit
 * reconciler pass, and readiness (store, shutdown, cluster ownership, Redis).
 */
export class OperationsService {
  private ownership: (() => OwnershipView | null) | null = null;

  constructor(private readonly deps: OperationsServiceDeps) {}

  /**
   * Start-up recovery (embedded mode, before the actors start): attempts left RUNNING by a process
   * that died are lost; each goes through the retry policy as `worker_lost` and so runs again as
   * a new attempt while attempts remain. Attempts of external consumers are left RUNNING while
   * external queues are configured: their consumer may still report within its lease, and the
   * external lease sweep reads the store, so it ends those whose lease runs out as it would have
   * without the restart. @returns how many were recovered
   */
  async recoverOrphans(): Promise<number> {
    const { store, clock, config } = this.deps;
    const external = Object.keys(config.externalQueues ?? {}).length === 0;
    let total = 0;
    for (;;) {
      const orphans = await store.findOrphanedAttempts(1000, { external });
      if (orphans.length === 0) return total;
      const now = clock.now();
      await store.completeAttempts(
        orphans.map((o) => lostAttemptCompletion(o, now, 'process stopped during the attempt')),
        now,
      );
      total += orphans.length;
    }
  }

  /**
   * Audit reconciler pass: finds waiting tasks more than `auditOverdueMs` past due and RUNNING
   * attempts whose lease has ended, sets the `scheduler_audit_findings` gauge, and repairs what is
   * safe: overdue tasks are offered to their partition owners again (an owner ignores what it
   * already holds). Expired leases are left to the dispatcher's lease sweeper. BLOCKED workflow
   * tasks whose upstreams are all terminal (in limbo) are reported: there must never be any.
   * @returns the report (at most 100 ids of each kind)
   */
  async audit(): Promise<AuditView> {
    const { store, clock, config, metrics, gateway } = this.deps;
    const now = clock.now();
    const scan = await store.auditScan(now, now - config.auditOverdueMs, 100);
    metrics.auditFindings.set({ kind: 'overdue' }, scan.overdueTotal);
    metrics.auditFindings.set({ kind: 'expired_lease' }, scan.expiredLeasesTotal);
    metrics.auditFindings.set({ kind: 'blocked_limbo' }, scan.blockedLimboTotal);
    gateway.tasksStored(scan.overdue);
    return auditJson(scan, now, config.auditOverdueMs);
  }

  /**
   * Cluster mode: where readiness reads partition ownership (the supervisor's lease component).
   * The probe answers null until the actors run.
   */
  setOwnershipProbe(probe: () => OwnershipView | null): void {
    this.ownership = probe;
  }

  /**
   * The error that stands for the store's current fault (`STORE_UNAVAILABLE`, 503 with
   * `Retry-After`), or null while the store has none: what an operation that failed for no reason
   * of its own answers while the store is away, instead of a 500.
   */
  storeFaultError(): StoreUnavailableError | null {
    const fault = this.deps.store.health.fault;
    return fault ? storeUnavailable(fault) : null;
  }

  /**
   * Readiness: accepting work and the store answers; in cluster mode also joined (the first lease
   * round ran), with the partitions this member owns (a member may own none when the cluster
   * has more members than partitions: it still serves the API) and those whose new lease it
   * holds while their tasks are being fenced (their owners start after). With Redis configured, `redis`
   * says whether it answers; while it does not, the node stays ready but degraded (it fires from
   * the store and applies its rate limits locally). A store fault (the store's health: a file
   * deleted or replaced, a full disk, a failed write, a lost connection) makes it unready, with
   * the fault in `storeFault`.
   */
  async ready(): Promise<{
    ready: boolean;
    store: boolean;
    partitions?: { owned: number; fencing: number; total: number };
    redis?: 'up' | 'down';
    storeFault?: StoreFaultView;
  }> {
    const fault = this.deps.store.health.fault;
    const store = fault === null && (await this.deps.store.ping().catch(() => false));
    const redis = this.deps.redisStatus?.();
    const withRedis = { ...(redis ? { redis } : {}), ...(fault ? { storeFault: faultView(fault) } : {}) };
    if (!this.ownership) return { ready: this.deps.accepting() && store, store, ...withRedis };
    const o = this.ownership();
    return {
      ready: this.deps.accepting() && store && (o?.joined ?? false),
      store,
      partitions: { owned: o?.owned.length ?? 0, fencing: o?.fencing.length ?? 0, total: o?.partitions ?? 0 },
      ...withRedis,
    };
  }
}
