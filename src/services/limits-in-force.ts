/**
 * The weights and start limits a node should have in force: the config file's, with the settings
 * stored through the admin API (by any node) over them. A node applies them when it starts; a
 * cluster member again when another member announces a change (the `limits` message of the
 * coordination bus), and every {@link LIMITS_SYNC_MS} for an announcement lost or never sent (no
 * bus: MongoDB without Redis) (docs/OPERATIONS.md "Cluster failover").
 */
import type { Config } from '../config';
import type { DispatchLimits, RateLimit } from '../domain/dispatch-limits';
import { ownValue } from '../domain/own-value';
import type { TenantSettings } from '../storage/tenant-store';

/**
 * How often a cluster member reads the stored limits again without being told (ms): rarely, since
 * a poll of them every 5 s on every node slowed the FerretDB cluster past its drain bound
 * (design-notes/concurrency-limits-read-at-start.md).
 */
export const LIMITS_SYNC_MS = 60_000;

/** Tenant weights, tenant start limits and task-type start limits, by tenant id or task type. */
export interface LimitsInForce {
  weights: Map<string, number>;
  tenants: Map<string, RateLimit>;
  taskTypes: Map<string, RateLimit>;
}

/**
 * The config file's settings with the stored ones over them, the rule of a start: a stored weight
 * replaces the config's (a stored null keeps it); a tenant with stored settings has their start
 * limit, and a stored null is none (`PUT /api/v1/tenants/{id}` with `rate_limit: null`; a `PUT`
 * that leaves the field out stores the limit then in force); a stored task-type limit replaces the
 * config's (a deleted one is not stored, and the config's applies). Only `DELETE` of the tenant
 * gives it the config's values again.
 */
export function limitsInForce(
  config: Pick<Config, 'tenants' | 'rateLimits'>,
  tenants: ReadonlyArray<TenantSettings>,
  taskTypes: ReadonlyArray<{ taskType: string; limit: RateLimit }>,
): LimitsInForce {
  const out: LimitsInForce = { weights: new Map(), tenants: new Map(), taskTypes: new Map() };
  for (const [id, t] of Object.entries(config.tenants)) {
    if (t.weight !== undefined) out.weights.set(id, t.weight);
    if (t.rateLimit) out.tenants.set(id, t.rateLimit);
  }
  for (const [type, limit] of Object.entries(config.rateLimits)) out.taskTypes.set(type, limit);
  for (const s of tenants) {
    if (s.weight !== null) out.weights.set(s.tenantId, s.weight);
    if (s.rateLimit !== null) out.tenants.set(s.tenantId, s.rateLimit);
    else out.tenants.delete(s.tenantId);
  }
  for (const { taskType, limit } of taskTypes) out.taskTypes.set(taskType, limit);
  return out;
}

/**
 * Makes `limits` hold `wanted`, changing only what differs: a limit set again starts a fresh, full
 * bucket, so one that did not change is left alone (re-made every few seconds, it would let a
 * burst through each time). `now`: epoch ms.
 * @returns how many settings changed
 */
export function applyLimits(limits: DispatchLimits, wanted: LimitsInForce, now: number): number {
  const current = limits.snapshot();
  let changes = 0;
  for (const id of Object.keys(current.weights)) {
    if (wanted.weights.has(id)) continue;
    limits.removeWeight(id);
    changes++;
  }
  for (const [id, weight] of wanted.weights) {
    if (ownValue(current.weights, id) === weight) continue;
    limits.setWeight(id, weight);
    changes++;
  }
  const sync = (have: Record<string, RateLimit>, want: Map<string, RateLimit>, set: (key: string, l: RateLimit | null) => void) => {
    for (const key of Object.keys(have)) {
      if (want.has(key)) continue;
      set(key, null);
      changes++;
    }
    for (const [key, limit] of want) {
      if (sameLimit(ownValue(have, key), limit)) continue;
      set(key, limit);
      changes++;
    }
  };
  sync(current.tenants, wanted.tenants, (id, l) => limits.setTenantLimit(id, l, now));
  sync(current.taskTypes, wanted.taskTypes, (type, l) => limits.setTypeLimit(type, l, now));
  return changes;
}

function sameLimit(a: RateLimit | undefined, b: RateLimit): boolean {
  return a !== undefined && a.ratePerSecond === b.ratePerSecond && a.burst === b.burst;
}
