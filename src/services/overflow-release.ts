import type { Config } from '../config';
import type { Clock } from '../domain/clock';
import { lowWaterCount, planRelease } from '../domain/overflow-policy';
import type { SchedulerMetrics } from '../observability/metrics';
import type { SchedulingGateway } from './ports';
import type { Store } from '../storage/store';
import type { SubmissionGuard } from './submission-guard';

export interface OverflowReleaseDeps {
  store: Store;
  clock: Clock;
  config: Pick<Config, 'overflow'>;
  guard: SubmissionGuard;
  metrics: SchedulerMetrics;
  /** Released tasks go to their partition owners like new submissions. */
  gateway: Pick<SchedulingGateway, 'tasksStored'>;
}

/**
 * The overflow release (the specification's backpressure layer 4: held low-priority work is
 * "processed when load decreases"): one {@link pass} reads the exact held and waiting counts and
 * releases held tasks, oldest first, while the waiting depth stays at or under
 * `overflow.lowWaterMark` × each cap (global and the task's tenant's; `domain/overflow-policy.ts`),
 * at most `overflow.releaseBatch` a pass. The service runs a pass every
 * `overflow.releaseIntervalMs` on the injected clock (bootstrap, `Periodic`). With overflow
 * disabled, passes read the store only until one finds nothing held (tasks held under an earlier
 * configuration are still released); after that they cost nothing, since nothing new is held.
 * Each pass also hands the submission guard the counts it read.
 *
 * Cluster mode: every member runs passes; each task is released once (compare-and-set), but two
 * members' passes at the same instant may together release up to twice the room.
 */
export class OverflowRelease {
  /** Overflow disabled and a pass found nothing held: nothing can be held any more, skip the reads. */
  private drained = false;

  constructor(private readonly deps: OverflowReleaseDeps) {}

  /** One release pass. @returns how many tasks it released */
  async pass(): Promise<number> {
    const { store, clock, config, guard, metrics, gateway } = this.deps;
    if (!config.overflow.enabled && this.drained) return 0;
    const held = await store.countOverflowByTenant();
    if (Object.keys(held).length === 0) {
      this.drained = !config.overflow.enabled;
      guard.refreshHeld(held);
      return 0;
    }
    const waiting = await store.countWaitingByTenant();
    const { lowWaterMark, releaseBatch } = config.overflow;
    const caps = { global: guard.globalCap, tenant: (t: string) => guard.tenantCap(t) };
    const total = Object.values(waiting).reduce((a, b) => a + b, 0);
    const room = caps.global === null ? releaseBatch : Math.min(releaseBatch, lowWaterCount(caps.global, lowWaterMark) - total);
    // Tenants over their own low-water mark are left out of the read, so they never hide others' tasks.
    const full = Object.keys(held).filter((t) => {
      const cap = caps.tenant(t);
      return cap !== null && lowWaterCount(cap, lowWaterMark) - (waiting[t] ?? 0) <= 0;
    });
    const ids = room > 0 ? planRelease(await store.listOverflow(room, full), waiting, caps, lowWaterMark, room) : [];
    const released = ids.length > 0 ? await store.releaseOverflow(ids, clock.now()) : [];
    for (const e of released) {
      waiting[e.tenantId] = (waiting[e.tenantId] ?? 0) + 1;
      held[e.tenantId] = Math.max(0, (held[e.tenantId] ?? 0) - 1);
    }
    guard.refresh(waiting, held);
    if (released.length > 0) {
      metrics.overflowReleased.inc(released.length);
      gateway.tasksStored(released);
    }
    return released.length;
  }
}
