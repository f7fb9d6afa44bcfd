/**
 * Tenant settings on MongoDB — putTenantSettings (one upsert by tenant id), putTaskTypeLimit (one
 * upsert by task type, or a delete for null), listTenantSettings / listTaskTypeLimits (reads),
 * countWaitingByTenant (one aggregation over tasks waiting: SCHEDULED, PENDING, RETRYING,
 * BLOCKED). Each write is a single-document write: atomic on its own, no transaction needed.
 */
import type { Collection } from 'mongodb';
import { RateLimit } from '../../../domain/dispatch-limits';
import { TenantSettings } from '../../tenant-store';
import type { TaskDoc } from '../documents';
import { DEPTH_STATES } from '../../../domain/state-machine';
import { inStates } from '../state-filter';

export interface TenantSettingsDoc {
  _id: string;
  weight: number | null;
  rate_per_second: number | null;
  burst: number | null;
  updated_at: number;
}

export interface TaskTypeLimitDoc {
  _id: string;
  rate_per_second: number;
  burst: number;
  updated_at: number;
}

export async function putTenantSettings(coll: Collection<TenantSettingsDoc>, s: TenantSettings): Promise<void> {
  await coll.replaceOne(
    { _id: s.tenantId },
    { weight: s.weight, rate_per_second: s.rateLimit?.ratePerSecond ?? null, burst: s.rateLimit?.burst ?? null, updated_at: s.updatedAt },
    { upsert: true },
  );
}

export async function listTenantSettings(coll: Collection<TenantSettingsDoc>): Promise<TenantSettings[]> {
  return (await coll.find({}).sort({ _id: 1 }).toArray()).map((d) => ({
    tenantId: d._id,
    weight: d.weight,
    rateLimit: d.rate_per_second === null || d.burst === null ? null : { ratePerSecond: d.rate_per_second, burst: d.burst },
    updatedAt: d.updated_at,
  }));
}

export async function putTaskTypeLimit(
  coll: Collection<TaskTypeLimitDoc>,
  taskType: string,
  limit: RateLimit | null,
  now: number,
): Promise<void> {
  if (limit === null) await coll.deleteOne({ _id: taskType });
  else
    await coll.replaceOne(
      { _id: taskType },
      { rate_per_second: limit.ratePerSecond, burst: limit.burst, updated_at: now },
      { upsert: true },
    );
}

export async function listTaskTypeLimits(coll: Collection<TaskTypeLimitDoc>): Promise<Array<{ taskType: string; limit: RateLimit }>> {
  return (await coll.find({}).sort({ _id: 1 }).toArray()).map((d) => ({
    taskType: d._id,
    limit: { ratePerSecond: d.rate_per_second, burst: d.burst },
  }));
}

export async function countWaitingByTenant(tasks: Collection<TaskDoc>): Promise<Record<string, number>> {
  const groups = await tasks
    .aggregate<{ _id: string; n: number }>([
      { $match: { state: inStates(DEPTH_STATES) } },
      { $group: { _id: '$tenant_id', n: { $sum: 1 } } },
    ])
    .toArray();
  return Object.fromEntries(groups.map((g) => [g._id, g.n]));
}
