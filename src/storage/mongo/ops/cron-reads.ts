/**
 * Cron reads (no writes): getCron; listCrons (newest first, cursor on seq; index cron_tasks_seq);
 * loadDueCrons (enabled, next_fire_time ≤ until, earliest first; index cron_tasks_due);
 * listCronFires (latest fire time first, cursor on fire time, index cron_fires_cron_time, with
 * each instance's current state from a second query: FerretDB has no `$lookup`);
 * cronsWithQueuedInstances (crons with BLOCKED instances; index tasks_cron_live).
 */
import { CronRecord } from '../../../domain/cron/cron-definition';
import { TaskState } from '../../../domain/task';
import { CronFireView, CronListQuery } from '../../cron-store';
import { decodeCursor, encodeCursor } from '../../cursor';
import type { MongoCollections } from '../collections';
import { cronFromDoc, fireFromDoc } from '../cron-documents';

export async function getCron(c: MongoCollections, id: string): Promise<CronRecord | null> {
  const doc = await c.crons.findOne({ _id: id });
  return doc ? cronFromDoc(doc) : null;
}

export async function listCrons(c: MongoCollections, q: CronListQuery): Promise<{ crons: CronRecord[]; nextCursor: string | null }> {
  const filter: Record<string, unknown> = {};
  if (q.cursor !== undefined) filter.seq = { $lt: decodeCursor(q.cursor) };
  if (q.tenantId !== undefined) filter.tenant_id = q.tenantId;
  if (q.enabled !== undefined) filter.enabled = q.enabled;
  const docs = await c.crons
    .find(filter)
    .sort({ seq: -1 })
    .limit(q.limit + 1)
    .toArray();
  const page = docs.slice(0, q.limit);
  return { crons: page.map(cronFromDoc), nextCursor: docs.length > q.limit ? encodeCursor(page[page.length - 1].seq) : null };
}

export async function loadDueCrons(c: MongoCollections, until: number, limit: number): Promise<CronRecord[]> {
  if (limit <= 0) return [];
  const docs = await c.crons
    .find({ enabled: true, next_fire_time: { $ne: null, $lte: until } })
    .sort({ next_fire_time: 1 })
    .limit(limit)
    .toArray();
  return docs.map(cronFromDoc);
}

export async function listCronFires(
  c: MongoCollections,
  cronId: string,
  q: { limit: number; cursor?: string },
): Promise<{ fires: CronFireView[]; nextCursor: string | null }> {
  const filter: Record<string, unknown> = { cron_id: cronId };
  if (q.cursor !== undefined) filter.fire_time = { $lt: decodeCursor(q.cursor) };
  const docs = await c.cronFires
    .find(filter)
    .sort({ fire_time: -1 })
    .limit(q.limit + 1)
    .toArray();
  const page = docs.slice(0, q.limit);
  const taskIds = page.map((d) => d.task_id).filter((id): id is string => id !== null);
  const states = new Map<string, TaskState>();
  if (taskIds.length > 0) {
    for (const t of await c.tasks.find({ _id: { $in: taskIds } }, { projection: { _id: 1, state: 1 } }).toArray()) {
      states.set(t._id, t.state as TaskState);
    }
  }
  return {
    fires: page.map((d) => ({ ...fireFromDoc(d), taskState: d.task_id === null ? null : (states.get(d.task_id) ?? null) })),
    nextCursor: docs.length > q.limit ? encodeCursor(page[page.length - 1].fire_time) : null,
  };
}

export async function cronsWithQueuedInstances(c: MongoCollections, limit: number): Promise<string[]> {
  if (limit <= 0) return [];
  const groups = await c.tasks
    .aggregate<{ _id: string }>([
      { $match: { cron_id: { $type: 'string' }, state: 'BLOCKED' } },
      { $group: { _id: '$cron_id' } },
      { $sort: { _id: 1 } },
      { $limit: limit },
    ])
    .toArray();
  return groups.map((g) => g._id);
}
