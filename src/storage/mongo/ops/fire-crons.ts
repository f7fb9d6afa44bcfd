/**
 * fireCrons — inputs: CronFiring[] (per due cron: the next_fire_time and version the evaluator
 * read, the new next_fire_time, the planned instances in fire-time order), now. Output: per
 * firing, whether it applied, the PENDING instances for their partition owners, the RUNNING
 * instances to abort, and the fire records.
 *
 * SQLite applies a firing in one savepoint. Here, without transactions, each firing is an order of
 * single-document writes that converges when repeated (docs/DESIGN.md §7: deterministic instance ids):
 * 1. check: the definition still has the expected next_fire_time and version and is enabled;
 *    otherwise nothing is written (`applied: false`) — a second firing of the same instant, a
 *    firing planned on an older version, a paused or deleted definition;
 * 2. per planned instance, in order: the overlap policy against the cron's live instances other
 *    than this firing's own (`skip` → record skipped/overlap; `queue` → insert it BLOCKED, or
 *    skipped/queue_full past `maxQueued`; `cancel_running` → cancel the live ones first, as
 *    cancelTask does, and insert it BLOCKED when one of them was RUNNING or PENDING, to be released
 *    once they have ended); later instances of the same firing are BLOCKED behind the first; then the
 *    insert under `cron-<cron_id>-<fire time>` (an existing id is kept as it is, once read back:
 *    see insertOrKeep) and the fire
 *    record (unique cron_id + fire_time: insert-or-keep);
 * 3. the compare-and-set `{_id, next_fire_time: expected, version: expected, enabled: true}` →
 *    the new next_fire_time: the commit point of the firing.
 * Why this order: a process that dies after step 2 has moved nothing; the next evaluation plans
 * the same fire times, finds the same ids and records, and completes the firing (its own
 * instances are excluded from the overlap check, so they are neither skipped nor cancelled). Had
 * the compare-and-set come first, a crash after it would lose the firing. The price: an edit,
 * pause or delete landing between steps 1 and 3 makes step 3 fail after instances were created —
 * the firing won that race, as if it had run a moment earlier; it answers `applied: false`, and
 * its PENDING instances are found by their partition owner's next window read.
 */
import { CronFireRecord, FireOutcome, SkipReason } from '../../../domain/cron/cron-definition';
import { TERMINAL_STATES } from '../../../domain/task';
import { CronFiring, CronFiringResult } from '../../cron-store';
import type { MongoCollections } from '../collections';
import { CronFireDoc, fireFromDoc } from '../cron-documents';
import { DUE_FIELDS, dueEntryFromDoc, isDuplicateKey, TaskDoc, taskToDoc } from '../documents';
import { cancelTask } from './cancel-task';
import { reserveSeq } from './seq-counter';

/** Live (non-terminal) instances of a cron other than `exclude`, oldest due first (index tasks_cron_live). */
export async function liveInstances(c: MongoCollections, cronId: string, exclude: string[]): Promise<TaskDoc[]> {
  const filter: Record<string, unknown> = { cron_id: cronId, state: { $nin: [...TERMINAL_STATES] } };
  if (exclude.length > 0) filter._id = { $nin: exclude };
  return c.tasks
    .find(filter, { projection: { ...DUE_FIELDS, attempts: 1 } })
    .sort({ due_at: 1, seq: 1 })
    .toArray();
}

export async function fireCrons(c: MongoCollections, firings: CronFiring[], now: number): Promise<CronFiringResult[]> {
  const results: CronFiringResult[] = [];
  for (const f of firings) results.push(await fireOne(c, f, now));
  return results;
}

async function fireOne(c: MongoCollections, f: CronFiring, now: number): Promise<CronFiringResult> {
  const notApplied: CronFiringResult = { cronId: f.cronId, applied: false, entries: [], aborts: [], records: [] };
  const expected = { _id: f.cronId, next_fire_time: f.expectedNextFireTime, version: f.expectedVersion, enabled: true };
  if ((await c.crons.countDocuments(expected, { limit: 1 })) === 0) return notApplied;

  const own = f.instances.flatMap((p) => (p.task ? [p.task.id] : []));
  const withTask = f.instances.filter((p) => p.task && p.outcome !== 'skipped').length;
  let nextSeq = withTask > 0 ? await reserveSeq(c, 'task_seq', withTask) : 0;
  let live: TaskDoc[] | null = null;
  let createdInBatch = false;
  const aborts: CronFiringResult['aborts'] = [];
  const created: string[] = [];
  const records: CronFireRecord[] = [];

  for (const p of f.instances) {
    let outcome: FireOutcome = p.outcome;
    let reason: SkipReason | null = p.reason;
    let taskId: string | null = null;
    if (p.task && outcome !== 'skipped') {
      let state = p.task.state as string;
      if (createdInBatch) {
        state = 'BLOCKED'; // later firings of one catch-up run after the earlier ones, in order
      } else {
        live ??= await liveInstances(c, f.cronId, own);
        if (live.length > 0) {
          if (f.overlapPolicy === 'skip') {
            outcome = 'skipped';
            reason = 'overlap';
          } else if (f.overlapPolicy === 'queue') {
            if (live.filter((d) => d.state === 'BLOCKED').length >= f.maxQueued) {
              outcome = 'skipped';
              reason = 'queue_full';
            } else {
              state = 'BLOCKED';
            }
          } else {
            for (const d of live) {
              const r = await cancelTask(c, d._id, now);
              if (r.kind === 'cancelling') aborts.push({ taskId: d._id, attempt: r.task.attempts });
            }
            // A running one stops only when its worker hears of the cancel, and a PENDING one
            // may be in a claim right now (FerretDB: a claim and this cancel can both apply): the
            // new instance waits queued until they have ended (releaseQueuedInstances).
            if (live.some((d) => d.state === 'RUNNING' || d.state === 'PENDING')) state = 'BLOCKED';
          }
        }
      }
      if (outcome !== 'skipped') {
        createdInBatch = true;
        taskId = p.task.id;
        created.push(taskId);
        const doc: TaskDoc = { ...taskToDoc(p.task, nextSeq++), cron_id: f.cronId, state };
        await insertOrKeep(c, doc);
      }
    }
    records.push(await recordFire(c, { cron_id: f.cronId, fire_time: p.fireTime, outcome, reason, task_id: taskId, recorded_at: now }));
  }

  const last = f.instances.length > 0 ? f.instances[f.instances.length - 1].fireTime : null;
  const moved = await c.crons.updateOne(expected, {
    $set: { next_fire_time: f.nextFireTime, updated_at: now, ...(last !== null ? { last_fire_time: last } : {}) },
  });
  if (moved.matchedCount === 0) return notApplied;

  const entries =
    created.length === 0
      ? []
      : (await c.tasks.find({ _id: { $in: created }, state: { $in: ['SCHEDULED', 'PENDING'] } }, { projection: DUE_FIELDS }).toArray())
          .map(dueEntryFromDoc)
          .sort((a, b) => created.indexOf(a.id) - created.indexOf(b.id));
  return { cronId: f.cronId, applied: true, entries, aborts, records };
}

/** Tries of {@link insertOrKeep} before the firing fails (it is then planned again). */
const INSERT_TRIES = 3;

/**
 * Inserts a cron instance, or keeps the one stored under its id (an earlier try of this firing,
 * or another member firing the same instant). A duplicate-key answer is believed only once the
 * instance is read back: FerretDB 1.x answered a duplicate for an instance whose insert, on the
 * connection of a member SIGKILLed at that moment, was then rolled back, and the firing recorded a
 * fire whose instance never existed (test/integration/cluster-cron.test.ts caught it). Not there:
 * insert again; after INSERT_TRIES the firing throws before its compare-and-set, so nothing moved
 * and the next evaluation fires the instant again.
 * @throws the insert's error when it is not a duplicate key; Error when the instance stays unreadable
 */
async function insertOrKeep(c: MongoCollections, doc: TaskDoc): Promise<void> {
  for (let i = 0; i < INSERT_TRIES; i++) {
    try {
      await c.tasks.insertOne(doc);
      return;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      if ((await c.tasks.countDocuments({ _id: doc._id }, { limit: 1 })) > 0) return;
    }
  }
  throw new Error(`cron instance ${doc._id}: duplicate key reported but not stored (${INSERT_TRIES} tries)`);
}

/** Inserts a fire record, or returns the one already stored for that cron and fire time. */
async function recordFire(c: MongoCollections, rec: CronFireDoc): Promise<CronFireRecord> {
  try {
    await c.cronFires.insertOne({ ...rec });
    return fireFromDoc(rec);
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
    const stored = await c.cronFires.findOne({ cron_id: rec.cron_id, fire_time: rec.fire_time });
    return stored ? fireFromDoc(stored) : fireFromDoc(rec);
  }
}
