/**
 * Cron reads, each one statement on the pool (autocommit: a consistent snapshot of committed
 * writes):
 * - getCron — input: id. Output: the definition, or null.
 * - listCrons — inputs: tenant and enabled filters, limit, cursor. Output: definitions newest first
 *   (by `seq`, from `cron_seq`) and the cursor of the next page (null on the last one).
 * - loadDueCrons — inputs: until (epoch ms), limit. Output: enabled definitions whose next fire
 *   time is at or before `until`, earliest first (index cron_tasks_due).
 * - listCronFires — inputs: cron id, limit, cursor. Output: fire records, latest fire time first,
 *   each with its instance's current state (null: no instance, or purged), and the next cursor.
 * - cronsWithQueuedInstances — input: limit. Output: ids of crons holding BLOCKED (queued)
 *   instances (index tasks_cron_live).
 */
import type { Db } from '../db';
import type { CronFireView, CronListQuery } from '../../cron-store';
import type { CronRecord } from '../../../domain/cron/cron-definition';
import { TERMINAL_STATES, TaskState } from '../../../domain/task';
import { TRANSITIONS } from '../../../domain/state-machine';
import { decodeCursor, encodeCursor } from '../../cursor';
import { CronFireRow, CronRow, cronFromRow, fireFromRow } from '../../sql/cron-rows';
import { sqlNotStates, sqlStates } from '../../sql/state-sql';

/** The definition `id`, or null. */
export async function getCron(db: Db, id: string): Promise<CronRecord | null> {
  const { rows } = await db.query<CronRow>(`SELECT * FROM cron_tasks WHERE id = $1`, [id]);
  return rows.length > 0 ? cronFromRow(rows[0]) : null;
}

/** Definitions newest first. @throws ValidationError for a cursor not made by this listing */
export async function listCrons(db: Db, q: CronListQuery): Promise<{ crons: CronRecord[]; nextCursor: string | null }> {
  const before = q.cursor === undefined ? Number.MAX_SAFE_INTEGER : decodeCursor(q.cursor);
  const enabled = q.enabled === undefined ? null : q.enabled ? 1 : 0;
  const { rows } = await db.query<CronRow>(
    `SELECT * FROM cron_tasks
     WHERE seq < $1 AND ($2::text IS NULL OR tenant_id = $2) AND ($3::integer IS NULL OR enabled = $3)
     ORDER BY seq DESC LIMIT $4`,
    [before, q.tenantId ?? null, enabled, q.limit + 1],
  );
  const more = rows.length > q.limit;
  const page = rows.slice(0, q.limit);
  return { crons: page.map(cronFromRow), nextCursor: more ? encodeCursor(page[page.length - 1].seq) : null };
}

/** Enabled definitions due at or before `until` (epoch ms), earliest first, at most `limit`. */
export async function loadDueCrons(db: Db, until: number, limit: number): Promise<CronRecord[]> {
  const { rows } = await db.query<CronRow>(
    `SELECT * FROM cron_tasks WHERE enabled = 1 AND next_fire_time IS NOT NULL AND next_fire_time <= $1
     ORDER BY next_fire_time, id LIMIT $2`,
    [until, limit],
  );
  return rows.map(cronFromRow);
}

/** Fire records of `cronId`, latest first, with each instance's state. @throws ValidationError for a bad cursor */
export async function listCronFires(
  db: Db,
  cronId: string,
  q: { limit: number; cursor?: string },
): Promise<{ fires: CronFireView[]; nextCursor: string | null }> {
  const before = q.cursor === undefined ? Number.MAX_SAFE_INTEGER : decodeCursor(q.cursor);
  const { rows } = await db.query<CronFireRow & { task_state: string | null }>(
    `SELECT f.*, t.state AS task_state FROM cron_fires f LEFT JOIN tasks t ON t.id = f.task_id
     WHERE f.cron_id = $1 AND f.fire_time < $2 ORDER BY f.fire_time DESC LIMIT $3`,
    [cronId, before, q.limit + 1],
  );
  const more = rows.length > q.limit;
  const page = rows.slice(0, q.limit);
  return {
    fires: page.map((r) => ({ ...fireFromRow(r), taskState: r.task_state as TaskState | null })),
    nextCursor: more ? encodeCursor(page[page.length - 1].fire_time) : null,
  };
}

/** Ids of crons with BLOCKED (queued) live instances, at most `limit`. */
export async function cronsWithQueuedInstances(db: Db, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ cron_id: string }>(
    `SELECT DISTINCT cron_id FROM tasks
     WHERE cron_id IS NOT NULL AND ${sqlNotStates([...TERMINAL_STATES])} AND ${sqlStates(TRANSITIONS.releaseQueued.from)}
     LIMIT $1`,
    [limit],
  );
  return rows.map((r) => r.cron_id);
}
