/**
 * releaseOverflow — inputs: ids of held tasks, now. Transitions `releaseLater` (OVERFLOW →
 * SCHEDULED, due at its own `scheduled_at`, when that is after now) and `release` (OVERFLOW →
 * PENDING, due now). Output: the due entries of the tasks released, in the order of `ids`; a task
 * no longer held (cancelled, released by another call or member) is left out.
 *
 * Order of single-document writes (no transactions): per task, read it, then one
 * `findOneAndUpdate` compare-and-set on (id, OVERFLOW, the `scheduled_at` read), so a PATCH of
 * its time in between makes the round read again. Guarantee: each task is released at most once,
 * with the time it has when released. Crash window: a process dying midway has released a prefix
 * of `ids`; the rest stay held and the next pass (of any member) releases them.
 */
import { DueEntry } from '../../../domain/task';
import type { MongoCollections } from '../collections';
import { dueEntryFromDoc } from '../documents';
import { MAX_ROUNDS } from './retry-rounds';
import { TRANSITIONS } from '../../../domain/state-machine';
import { inStates } from '../state-filter';

export async function releaseOverflow(c: MongoCollections, ids: readonly string[], now: number): Promise<DueEntry[]> {
  const out: DueEntry[] = [];
  for (const id of ids) {
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const held = await c.tasks.findOne({ _id: id, state: inStates(TRANSITIONS.release.from) }, { projection: { scheduled_at: 1 } });
      if (!held) break;
      const later = held.scheduled_at !== null && held.scheduled_at !== undefined && held.scheduled_at > now;
      const set = later
        ? { state: TRANSITIONS.releaseLater.to, due_at: held.scheduled_at as number, updated_at: now }
        : { state: TRANSITIONS.release.to, due_at: now, updated_at: now };
      const doc = await c.tasks.findOneAndUpdate(
        {
          _id: id,
          state: inStates(later ? TRANSITIONS.releaseLater.from : TRANSITIONS.release.from),
          scheduled_at: held.scheduled_at ?? null,
        },
        { $set: set },
        { returnDocument: 'after' },
      );
      if (doc) {
        out.push(dueEntryFromDoc(doc));
        break;
      }
    }
  }
  return out;
}
