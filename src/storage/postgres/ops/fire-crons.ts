/**
 * fireCrons — inputs: CronFiring[] (per due cron: the next_fire_time and version the evaluator
 * read, the new next_fire_time, the planned instances in fire-time order), now. Output: per
 * firing, in the order given, whether it applied, the PENDING instances for their partition
 * owners, the RUNNING instances to abort, and the fire records written.
 *
 * Guarantee (docs/DESIGN.md §7), per firing, inside the caller's group-commit transaction (all of
 * a firing commits or none of it), with several nodes evaluating the same crons:
 * 1. compare-and-set `UPDATE cron_tasks … WHERE id AND next_fire_time = expected AND version =
 *    expected AND enabled = 1`. A second node firing the same instant waits for the first one's
 *    row lock, re-checks the condition on the committed row (READ COMMITTED), finds the moved
 *    next_fire_time and changes nothing (`applied: false`); so does a firing that read a
 *    definition since edited, paused or deleted. The row lock is held to the end of the
 *    transaction, so the rest of the firing runs alone for this cron (releaseQueuedInstances
 *    takes the same lock);
 * 2. the overlap policy against the cron's live instances, read after the lock (`skip` → record
 *    `skipped`/`overlap`; `queue` → insert BLOCKED, or `skipped`/`queue_full` past `maxQueued`;
 *    `cancel_running` → the waiting ones cancelled and the RUNNING ones asked to cancel, each a
 *    compare-and-set on its state as cancelTask does — cron instances are never workflow tasks —
 *    and the new instance BLOCKED when one of them was RUNNING or PENDING, or became RUNNING
 *    meanwhile: released once they have ended, never beside them). Later instances of the same
 *    firing (a catch-up) are BLOCKED behind the first, whatever the policy;
 * 3. the instances under their deterministic ids `cron-<cron_id>-<fire time>` in one INSERT …
 *    ON CONFLICT (id) DO NOTHING (an existing id is kept as it is), and the fire records in one
 *    INSERT … ON CONFLICT (cron_id, fire_time) DO NOTHING: even a definition edited back to a fire
 *    time already fired creates no second instance or record for it.
 * Firings are applied in the order of their cron ids (row locks in one order between nodes).
 */
import type { Db } from '../db';
import type { CronFiring, CronFiringResult, PlannedInstance } from '../../cron-store';
import type { CronFireRecord, FireOutcome, SkipReason } from '../../../domain/cron/cron-definition';
import { DueEntry, NewTask, TERMINAL_STATES, TaskState } from '../../../domain/task';
import { GUARDS, TRANSITIONS } from '../../../domain/state-machine';
import { DUE_COLUMNS, TaskRow, dueEntryFromRow } from '../../sql/row-mapping';
import { sqlNotStates, sqlState, sqlStates } from '../../sql/state-sql';
import { insertTaskRows } from './task-row-insert';

/** The live (non-terminal) instances of cron $1, oldest due first; matches index tasks_cron_live. */
export const LIVE_CRON_INSTANCES_SQL = `
  SELECT ${DUE_COLUMNS}, attempts FROM tasks
  WHERE cron_id = $1 AND ${sqlNotStates([...TERMINAL_STATES])}
  ORDER BY due_at, seq`;

type LiveRow = TaskRow & { attempts: number };

/** What one planned instance becomes once the overlap policy is applied. */
interface Decided {
  planned: PlannedInstance;
  outcome: FireOutcome;
  reason: SkipReason | null;
  /** The instance to insert and its first state (null: none). */
  insert: { task: NewTask; state: TaskState } | null;
}

/** Applies each firing (see the file header). */
export async function fireCrons(db: Db, firings: CronFiring[], now: number): Promise<CronFiringResult[]> {
  const results = new Array<CronFiringResult>(firings.length);
  const order = firings
    .map((_, i) => i)
    .sort((a, b) => (firings[a].cronId < firings[b].cronId ? -1 : firings[a].cronId > firings[b].cronId ? 1 : a - b));
  for (const i of order) results[i] = await fireOne(db, firings[i], now);
  return results;
}

async function fireOne(db: Db, f: CronFiring, now: number): Promise<CronFiringResult> {
  const result: CronFiringResult = { cronId: f.cronId, applied: false, entries: [], aborts: [], records: [] };
  const last = f.instances.length > 0 ? f.instances[f.instances.length - 1].fireTime : null;
  const cas = await db.query(
    `UPDATE cron_tasks SET next_fire_time = $2::bigint, last_fire_time = COALESCE($3::bigint, last_fire_time), updated_at = $4
     WHERE id = $1 AND next_fire_time = $5 AND version = $6 AND enabled = 1`,
    [f.cronId, f.nextFireTime, last, now, f.expectedNextFireTime, f.expectedVersion],
  );
  if (!cas.rowCount) return result;
  result.applied = true;

  const decided = await applyOverlap(db, f, now, result);
  const inserts = decided.flatMap((d) => (d.insert ? [d.insert] : []));
  const rows = await insertTaskRows<TaskRow>(
    db,
    inserts.map((x) => x.task),
    { extras: inserts.map((x) => ({ cronId: f.cronId, state: x.state })), skipExisting: true, returning: DUE_COLUMNS },
  );
  const inserted = new Map(rows.map((r) => [r.id, r]));
  for (const d of decided) {
    const row = d.insert ? inserted.get(d.insert.task.id) : undefined;
    if (row && row.state !== 'BLOCKED') result.entries.push(dueEntryFromRow(row) as DueEntry);
  }

  const { rows: recorded } = await db.query<{ fire_time: number }>(
    `INSERT INTO cron_fires (cron_id, fire_time, outcome, reason, task_id, recorded_at)
     SELECT $1, u.fire_time, u.outcome, u.reason, u.task_id, $2
     FROM unnest($3::bigint[], $4::text[], $5::text[], $6::text[]) WITH ORDINALITY AS u(fire_time, outcome, reason, task_id, ord)
     ORDER BY u.ord
     ON CONFLICT (cron_id, fire_time) DO NOTHING
     RETURNING fire_time`,
    [
      f.cronId,
      now,
      decided.map((d) => d.planned.fireTime),
      decided.map((d) => d.outcome),
      decided.map((d) => d.reason),
      decided.map((d) => d.insert?.task.id ?? null),
    ],
  );
  const written = new Set(recorded.map((r) => r.fire_time));
  for (const d of decided) {
    if (!written.has(d.planned.fireTime)) continue;
    written.delete(d.planned.fireTime); // a fire time planned twice is recorded once
    const rec: CronFireRecord = {
      cronId: f.cronId,
      fireTime: d.planned.fireTime,
      outcome: d.outcome,
      reason: d.reason,
      taskId: d.insert?.task.id ?? null,
      recordedAt: now,
    };
    result.records.push(rec);
  }
  return result;
}

/**
 * The overlap policy for the planned instances of an applied firing, against the cron's live
 * instances (read once, under the cron's row lock). `cancel_running` cancels here and adds the
 * aborts to `result`.
 */
async function applyOverlap(db: Db, f: CronFiring, now: number, result: CronFiringResult): Promise<Decided[]> {
  const decided: Decided[] = [];
  let live: LiveRow[] | null = null;
  let created = false;
  for (const p of f.instances) {
    const d: Decided = { planned: p, outcome: p.outcome, reason: p.reason, insert: null };
    decided.push(d);
    if (!p.task || p.outcome === 'skipped') continue;
    let state: TaskState = p.task.state;
    if (created) {
      state = 'BLOCKED'; // later firings of one catch-up run after the earlier ones, in order
    } else {
      live ??= (await db.query<LiveRow>(LIVE_CRON_INSTANCES_SQL, [f.cronId])).rows;
      if (live.length > 0) {
        if (f.overlapPolicy === 'skip') {
          d.outcome = 'skipped';
          d.reason = 'overlap';
          continue;
        }
        if (f.overlapPolicy === 'queue') {
          if (live.filter((r) => r.state === 'BLOCKED').length >= f.maxQueued) {
            d.outcome = 'skipped';
            d.reason = 'queue_full';
            continue;
          }
          state = 'BLOCKED';
        } else {
          const aborted = await cancelLive(db, live, now);
          result.aborts.push(...aborted);
          // A running one stops only when its worker hears of the cancel, and a PENDING one may be
          // in a claim right now: the new instance waits queued until they have ended.
          if (aborted.length > 0 || live.some((r) => r.state === 'RUNNING' || r.state === 'PENDING')) state = 'BLOCKED';
        }
      }
    }
    created = true;
    d.insert = { task: p.task, state };
  }
  return decided;
}

/**
 * Cancels the live instances `live` as cancelTask does, each a compare-and-set on its state:
 * waiting ones become CANCELLED, RUNNING ones get cancel_requested. The second statement sees
 * what the first did and any claim committed meanwhile, so an instance claimed between the read
 * and the cancel is asked to cancel too. Output: the RUNNING ones asked, in the order of `live`.
 */
async function cancelLive(db: Db, live: LiveRow[], now: number): Promise<Array<{ taskId: string; attempt: number }>> {
  const ids = live.map((r) => r.id);
  await db.query(
    `UPDATE tasks SET state = ${sqlState(TRANSITIONS.cancel.to)}, completed_at = $2, updated_at = $2
     WHERE id = ANY($1::text[]) AND ${sqlStates(TRANSITIONS.cancel.from)}`,
    [ids, now],
  );
  const { rows } = await db.query<{ id: string; attempts: number }>(
    `UPDATE tasks SET cancel_requested = 1, updated_at = $2
     WHERE id = ANY($1::text[]) AND ${sqlStates(GUARDS.attempt)}
     RETURNING id, attempts`,
    [ids, now],
  );
  const asked = new Map(rows.map((r) => [r.id, r.attempts]));
  return ids.flatMap((id) => (asked.has(id) ? [{ taskId: id, attempt: asked.get(id) as number }] : []));
}
