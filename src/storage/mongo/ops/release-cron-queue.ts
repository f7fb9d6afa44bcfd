/**
 * releaseQueuedInstances — inputs: cron ids, now. For each cron whose live (non-terminal)
 * instances are all BLOCKED (queued by overlap policy `queue`), the oldest queued one (due_at,
 * seq) becomes PENDING. Output: the released instances (due entries for their partition owners).
 * Guarantee: the release is a compare-and-set `{_id, state: 'BLOCKED'}` on the oldest instance
 * found by the read just before, so two evaluators releasing the same cron release it once; a
 * cron with a live instance out of BLOCKED is left alone, so at most one instance of a `queue`
 * cron runs at a time (a firing that inserts a PENDING instance at the same moment is the one
 * race the read cannot see; it needs a transaction, see docs/MONGODB.md).
 */
import { DueEntry } from '../../../domain/task';
import type { MongoCollections } from '../collections';
import { dueEntryFromDoc } from '../documents';
import { liveInstances } from './fire-crons';
import { TRANSITIONS, canTransition } from '../../../domain/state-machine';
import { inStates } from '../state-filter';
import { TaskState } from '../../../domain/task';

export async function releaseQueuedInstances(c: MongoCollections, cronIds: string[], now: number): Promise<DueEntry[]> {
  const released: DueEntry[] = [];
  for (const cronId of new Set(cronIds)) {
    const live = await liveInstances(c, cronId, []);
    if (live.length === 0 || live.some((d) => !canTransition(d.state as TaskState, 'releaseQueued'))) continue;
    const doc = await c.tasks.findOneAndUpdate(
      { _id: live[0]._id, state: inStates(TRANSITIONS.releaseQueued.from) },
      { $set: { state: TRANSITIONS.releaseQueued.to, updated_at: now } },
      { returnDocument: 'after' },
    );
    if (doc) released.push(dueEntryFromDoc(doc));
  }
  return released;
}
