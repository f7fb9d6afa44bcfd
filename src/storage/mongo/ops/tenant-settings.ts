/**
 * Tenant settings on MongoDB — putTenantSettings (one upsert by tenant id: `$set` of the fields
 * given, `$setOnInsert` of the fallback for the others, answered with the document after it), putTaskTypeLimit (one
 * upsert by task type, or a delete for null), listTenantSettings / listTaskTypeLimits (reads),
 * countWaitingByTenant (one aggregation over tasks waiting: SCHEDULED, PENDING, RETRYING,
 * BLOCKED). Each write is a single-document write: atomic on its own, no transaction needed.
 */
import type { Collection } from 'mongodb';
import { RateLimit } from '../../../domain/dispatch-limits';
import { insertedValues, TenantSettings, TenantSettingsChange } from '../../tenant-store';
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

export async function putTenantSettings(coll: Collection<TenantSettingsDoc>, c: TenantSettingsChange): Promise<TenantSettings> {
  const fresh = insertedValues(c);
  const set: Partial<TenantSettingsDoc> = { updated_at: c.updatedAt };
  const onInsert: Partial<TenantSettingsDoc> = {};
  (c.weight !== undefined ? set : onInsert).weight = fresh.weight;
  const limitFields = { rate_per_second: fresh.rateLimit?.ratePerSecond ?? null, burst: fresh.rateLimit?.burst ?? null };
  Object.assign(c.rateLimit !== undefined ? set : onInsert, limitFields);
  const doc = await coll.findOneAndUpdate(
    { _id: c.tenantId },
    Object.keys(onInsert).length > 0 ? { $set: set, $setOnInsert: onInsert } : { $set: set },
    { upsert: true, returnDocument: 'after', includeResultMetadata: false },
  );
  if (!doc) throw new Error(`tenant settings of ${c.tenantId}: the upsert answered no document`);
  return settingsOf(doc);
}

/** A stored document as the contract's shape. */
function settingsOf(d: TenantSettingsDoc): TenantSettings {
  // `== null`: a field absent from the document (FerretDB answers an upsert's new document
  // without its `$setOnInsert` fields) is as good as null.
  return {
    tenantId: d._id,
    weight: d.weight ?? null,
    rateLimit: d.rate_per_second == null || d.burst == null ? null : { ratePerSecond: d.rate_per_second, burst: d.burst },
    updatedAt: d.updated_at,
  };
}

export async function listTenantSettings(coll: Collection<TenantSettingsDoc>): Promise<TenantSettings[]> {
  return (await coll.find({}).sort({ _id: 1 }).toArray()).map(settingsOf);
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
