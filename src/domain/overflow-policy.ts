/**
 * Priority shedding into an overflow hold (the specification's backpressure layer 4: "when
 * overloaded, drop low-priority tasks first; move them to an overflow queue, processed when load
 * decreases"). Pure decisions over waiting counts; the submission guard and the overflow release
 * apply them. "Waiting" is the depth the caps limit: SCHEDULED, PENDING, RETRYING and BLOCKED
 * tasks; tasks in the hold (state OVERFLOW) are not waiting and are counted apart.
 */
import type { Priority } from './task';

/** Share of a cap at which each priority is shed: low first, then medium; high only at the cap. */
export const SHEDDING_THRESHOLDS: Readonly<Record<Priority, number>> = { low: 0.8, medium: 0.9, high: 1 };

/** The overflow settings (config `overflow`). */
export interface OverflowSettings {
  /** Low-priority submissions over a shedding threshold are held (202, OVERFLOW) instead of refused. */
  enabled: boolean;
  /** Share of a cap (0 < x ≤ 0.8) under which the waiting depth must fall before held tasks are released. */
  lowWaterMark: number;
  /** Most tasks held at once (all tenants); a low submission beyond it is refused (503). */
  maxTasks: number;
}

/** One cap a submission is checked against, with the waiting count it meets. */
export interface CapReading {
  scope: 'global' | 'tenant';
  /** Waiting tasks in this scope, counting the submission's earlier items of the same batch. */
  waiting: number;
  /** null: no cap in this scope. */
  cap: number | null;
}

/** What to do with one submission. */
export type Admission =
  | { kind: 'admit' }
  | { kind: 'overflow' }
  /** `scope` `overflow`: the hold is full (`waiting` is then the hold's size, `cap` its maximum). */
  | { kind: 'refuse'; scope: 'global' | 'tenant' | 'overflow'; waiting: number; cap: number };

/**
 * Decides one submission. Over a cap itself every priority is refused (the hard cap). Over its
 * priority's shedding threshold ({@link SHEDDING_THRESHOLDS}) a task is refused, except a low one
 * when overflow is enabled: it is held while the hold has room. A low task whose tenant already
 * has tasks held is held too, so it never overtakes them (released oldest first).
 * @param readings the global and the tenant cap with their waiting counts
 * @param tenantHeld tasks of the submission's tenant in the hold
 * @param held tasks in the hold in all
 */
export function decideAdmission(
  priority: Priority,
  readings: readonly CapReading[],
  tenantHeld: number,
  held: number,
  settings: OverflowSettings,
): Admission {
  let shed = false;
  for (const r of readings) {
    if (r.cap === null) continue;
    if (r.waiting >= r.cap) return { kind: 'refuse', scope: r.scope, waiting: r.waiting, cap: r.cap };
    if (r.waiting >= r.cap * SHEDDING_THRESHOLDS[priority]) {
      if (priority !== 'low' || !settings.enabled) return { kind: 'refuse', scope: r.scope, waiting: r.waiting, cap: r.cap };
      shed = true;
    }
  }
  if (!shed && !(priority === 'low' && settings.enabled && tenantHeld > 0)) return { kind: 'admit' };
  if (held >= settings.maxTasks) return { kind: 'refuse', scope: 'overflow', waiting: held, cap: settings.maxTasks };
  return { kind: 'overflow' };
}

/** The waiting depth a cap's low-water mark allows (at least 1, so a tiny cap still drains its hold). */
export function lowWaterCount(cap: number, lowWaterMark: number): number {
  return Math.max(1, Math.floor(cap * lowWaterMark));
}

/** A held task as the release reads it, oldest first. */
export interface HeldTask {
  id: string;
  tenantId: string;
}

/**
 * Which held tasks to release now: oldest first, as many as keep the waiting depth at or under
 * the low-water mark of the global cap and of each task's tenant cap. A tenant without room is
 * skipped (its tasks stay held) and never holds up another tenant's. A scope without a cap sets
 * no limit (a cap removed from the config releases everything held).
 * @param held held tasks, oldest first
 * @param waitingByTenant exact waiting counts per tenant (tenants absent: 0)
 * @param max most tasks to release in this pass
 * @returns the ids to release, oldest first
 */
export function planRelease(
  held: readonly HeldTask[],
  waitingByTenant: Readonly<Record<string, number>>,
  caps: { global: number | null; tenant: (tenantId: string) => number | null },
  lowWaterMark: number,
  max: number,
): string[] {
  const total = Object.values(waitingByTenant).reduce((a, b) => a + b, 0);
  let room = caps.global === null ? max : Math.min(max, lowWaterCount(caps.global, lowWaterMark) - total);
  const tenantRoom = new Map<string, number>();
  const out: string[] = [];
  for (const t of held) {
    if (room <= 0) break;
    let r = tenantRoom.get(t.tenantId);
    if (r === undefined) {
      const cap = caps.tenant(t.tenantId);
      r = cap === null ? Number.POSITIVE_INFINITY : lowWaterCount(cap, lowWaterMark) - (waitingByTenant[t.tenantId] ?? 0);
    }
    if (r > 0) {
      out.push(t.id);
      room--;
      r--;
    }
    tenantRoom.set(t.tenantId, r);
  }
  return out;
}
