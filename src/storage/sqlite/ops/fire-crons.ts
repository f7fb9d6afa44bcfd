/**
 * fireCrons — inputs: CronFiring[] (per due cron: the next_fire_time and version the evaluator
 * read, the new next_fire_time, the planned instances in fire-time order), now. Output: per
 * firing, whether it applied, the PENDING instances for their partition owners, the RUNNING
 * instances to abort, and the fire records written.
 *
 * Guarantee (docs/DESIGN.md §7), per firing, atomically inside one group-commit savepoint:
 * 1. compare-and-set `next_fire_time = expected AND version = expected AND enabled`; a second
 *    evaluator racing on the same instant (or a firing that read a definition since edited)
 *    changes nothing and gets `applied: false`;
 * 2. for each planned instance: the overlap policy against the cron's live instances
 *    (`skip` → record `skipped`/`overlap`; `queue` → insert it BLOCKED, or `skipped`/`queue_full`
 *    past `maxQueued`; `cancel_running` → cancel the live ones first, as cancelTask does, and
 *    insert it BLOCKED when one of them was RUNNING or PENDING (possibly being claimed): it is
 *    released once they have ended, so two instances never run at once), then
 *    the insert under the deterministic id `cron-<cron_id>-<fire time>` (never twice: an existing
 *    id is kept as it is) and the fire record (primary key cron_id + fire_time, so never twice).
 *    The policy is checked against instances live before this firing; later instances of the same
 *    firing (a catch-up of several missed times) are created BLOCKED behind the first, so they
 *    run one after another, in fire-time order (releaseQueuedInstances), whatever the policy.
 */
import type Database from 'better-sqlite3';
import { CronFireRecord, FireOutcome, SkipReason } from '../../../domain/cron/cron-definition';
import { DueEntry } from '../../../domain/task';
import { CronFiring, CronFiringResult } from '../../cron-store';
import { DUE_COLUMNS, TaskRow, dueEntryFromRow } from '../../sql/row-mapping';
import { prepareCancelTask } from './cancel-task';
import { prepareInsertTasks } from './insert-tasks';
import { TERMINAL_STATES } from '../../../domain/task';
import { sqlNotStates } from '../../sql/state-sql';

/** The live (non-terminal) instances of a cron, oldest due first; matches index tasks_cron_live. */
export const LIVE_CRON_INSTANCES_SQL = `
  SELECT ${DUE_COLUMNS}, attempts FROM tasks
  WHERE cron_id = ? AND ${sqlNotStates([...TERMINAL_STATES])}
  ORDER BY due_at, seq`;

export function prepareFireCrons(db: Database.Database): (firings: CronFiring[], now: number) => CronFiringResult[] {
  const cas = db.prepare(`
    UPDATE cron_tasks SET next_fire_time = @next, last_fire_time = COALESCE(@last, last_fire_time), updated_at = @now
    WHERE id = @id AND next_fire_time = @expected AND version = @version AND enabled = 1`);
  const live = db.prepare(LIVE_CRON_INSTANCES_SQL);
  const exists = db.prepare(`SELECT 1 FROM tasks WHERE id = ?`).pluck();
  const insertTasks = prepareInsertTasks(db);
  const tag = db.prepare(`UPDATE tasks SET cron_id = ?, state = ? WHERE id = ? RETURNING ${DUE_COLUMNS}`);
  const record = db.prepare(`
    INSERT OR IGNORE INTO cron_fires (cron_id, fire_time, outcome, reason, task_id, recorded_at) VALUES (?, ?, ?, ?, ?, ?)`);
  const cancelTask = prepareCancelTask(db);

  return (firings, now) =>
    firings.map((f) => {
      const result: CronFiringResult = { cronId: f.cronId, applied: false, entries: [], aborts: [], records: [] };
      const last = f.instances.length > 0 ? f.instances[f.instances.length - 1].fireTime : null;
      const changed = cas.run({
        id: f.cronId,
        next: f.nextFireTime,
        last,
        now,
        expected: f.expectedNextFireTime,
        version: f.expectedVersion,
      });
      if (changed.changes === 0) return result;
      result.applied = true;
      let createdInBatch = false;
      for (const p of f.instances) {
        let outcome: FireOutcome = p.outcome;
        let reason: SkipReason | null = p.reason;
        let taskId: string | null = null;
        if (p.task && outcome !== 'skipped') {
          let state: string = p.task.state;
          const liveRows = createdInBatch ? [] : (live.all(f.cronId) as Array<TaskRow & { attempts: number }>);
          if (createdInBatch) {
            state = 'BLOCKED'; // later firings of one catch-up run after the earlier ones, in order
          } else if (liveRows.length > 0) {
            if (f.overlapPolicy === 'skip') {
              outcome = 'skipped';
              reason = 'overlap';
            } else if (f.overlapPolicy === 'queue') {
              if (liveRows.filter((r) => r.state === 'BLOCKED').length >= f.maxQueued) {
                outcome = 'skipped';
                reason = 'queue_full';
              } else {
                state = 'BLOCKED';
              }
            } else {
              for (const r of liveRows) {
                const c = cancelTask(r.id, now);
                if (c.kind === 'cancelling') result.aborts.push({ taskId: r.id, attempt: c.task.attempts });
              }
              // A running one stops only when its worker hears of the cancel, and a PENDING one
              // may be in a claim right now: the new instance waits queued until they have ended
              // (releaseQueuedInstances), never beside them.
              if (liveRows.some((r) => r.state === 'RUNNING' || r.state === 'PENDING')) state = 'BLOCKED';
            }
          }
          if (outcome !== 'skipped') {
            createdInBatch = true;
            taskId = p.task.id;
            if (exists.get(taskId) === undefined) {
              insertTasks([p.task]);
              const row = tag.get(f.cronId, state, taskId) as TaskRow;
              if (state !== 'BLOCKED') result.entries.push(dueEntryFromRow(row) as DueEntry);
            }
          }
        }
        if (record.run(f.cronId, p.fireTime, outcome, reason, taskId, now).changes > 0) {
          const rec: CronFireRecord = { cronId: f.cronId, fireTime: p.fireTime, outcome, reason, taskId, recordedAt: now };
          result.records.push(rec);
        }
      }
      return result;
    });
}
