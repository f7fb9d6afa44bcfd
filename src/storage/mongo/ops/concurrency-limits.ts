/**
 * Concurrency limits on MongoDB — putConcurrencyLimit (inputs: key, max_running or null, now; one
 * upsert by key, or a delete for null), listConcurrencyLimits (every document by key). Each write
 * is a single-document write, atomic on its own: a key has at most one document, the last write
 * wins.
 */
import type { Collection } from 'mongodb';
import { ConcurrencyLimitRecord } from '../../concurrency-store';

export interface ConcurrencyLimitDoc {
  _id: string;
  max_running: number;
  updated_at: number;
}

export async function putConcurrencyLimit(
  coll: Collection<ConcurrencyLimitDoc>,
  key: string,
  maxRunning: number | null,
  now: number,
): Promise<void> {
  if (maxRunning === null) await coll.deleteOne({ _id: key });
  else await coll.replaceOne({ _id: key }, { max_running: maxRunning, updated_at: now }, { upsert: true });
}

export async function listConcurrencyLimits(coll: Collection<ConcurrencyLimitDoc>): Promise<ConcurrencyLimitRecord[]> {
  return (await coll.find({}).sort({ _id: 1 }).toArray()).map((d) => ({ key: d._id, maxRunning: d.max_running, updatedAt: d.updated_at }));
}
