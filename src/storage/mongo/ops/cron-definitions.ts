/**
 * Cron definition writes.
 * createCron — inputs: CronRecord. Reserves a `seq` (listing order) and inserts the document under
 * the cron id; a duplicate id throws (E11000).
 * updateCron — inputs: id, changes, now. One `findOneAndUpdate`: the given fields, version + 1,
 * updated_at = now; with `ifVersion`, only on the document at that version. Output: the definition
 * after the edit, or null. Because every edit changes
 * the version, a firing planned on the old version fails its compare-and-set (fire-crons.ts).
 * deleteCron — inputs: id. Deletes the definition, then its fire records (its instances stay as
 * ordinary tasks). Output: whether it existed. Crash window: a process dying between the two
 * deletes leaves fire records of a deleted cron; nothing reads them (they are listed per cron)
 * and the fire-record retention removes them with the others.
 */
import { CronRecord } from '../../../domain/cron/cron-definition';
import { CronChanges } from '../../cron-store';
import type { MongoCollections } from '../collections';
import { cronFromDoc, cronToDoc } from '../cron-documents';
import { insertNumbered } from './seq-counter';

export async function createCron(c: MongoCollections, cron: CronRecord): Promise<void> {
  await insertNumbered(c, c.crons, 'cron_seq', (seq) => cronToDoc(cron, seq));
}

export async function updateCron(c: MongoCollections, id: string, changes: CronChanges, now: number): Promise<CronRecord | null> {
  const set: Record<string, unknown> = { updated_at: now };
  if (changes.name !== undefined) set.name = changes.name;
  if (changes.cronExpression !== undefined) set.cron_expression = changes.cronExpression;
  if (changes.timezone !== undefined) set.timezone = changes.timezone;
  if (changes.template !== undefined) set.template = JSON.stringify(changes.template);
  if (changes.overlapPolicy !== undefined) set.overlap_policy = changes.overlapPolicy;
  if (changes.catchUp !== undefined) set.catch_up = changes.catchUp;
  if (changes.maxCatchUp !== undefined) set.max_catch_up = changes.maxCatchUp;
  if (changes.enabled !== undefined) set.enabled = changes.enabled;
  if (changes.nextFireTime !== undefined) set.next_fire_time = changes.nextFireTime;
  const filter = changes.ifVersion === undefined ? { _id: id } : { _id: id, version: changes.ifVersion };
  const doc = await c.crons.findOneAndUpdate(filter, { $set: set, $inc: { version: 1 } }, { returnDocument: 'after' });
  return doc ? cronFromDoc(doc) : null;
}

export async function deleteCron(c: MongoCollections, id: string): Promise<boolean> {
  const deleted = (await c.crons.deleteOne({ _id: id })).deletedCount === 1;
  if (deleted) await c.cronFires.deleteMany({ cron_id: id });
  return deleted;
}
