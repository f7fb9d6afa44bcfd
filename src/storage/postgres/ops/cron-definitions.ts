/**
 * Cron definition writes, each one statement group inside the caller's group-commit transaction:
 * - createCron — input: a CronRecord. Inserts it with `seq` from the sequence `cron_seq` (the
 *   listing order, newest first). Output: none. @throws the database's unique violation (23505)
 *   on a duplicate id.
 * - updateCron — inputs: id, the fields to change (`nextFireTime` recomputed by the caller), now.
 *   One UPDATE that sets them with `version = version + 1` on the row it holds locked, RETURNING the
 *   row. Output: the definition after the edit, or null when there is none. Two edits of one cron on
 *   two nodes serialise on the row lock, each adding one to the version it finds. With `ifVersion`
 *   the row must still be at that version once its lock is held (READ COMMITTED re-checks the WHERE
 *   on the row's newest version), else nothing changes and the answer is null.
 * - deleteCron — input: id. Deletes the definition and its fire records (its instances stay as
 *   ordinary tasks). Output: whether a definition was deleted.
 * Guarantee: an edit or delete and a firing never interleave: fireCrons' compare-and-set on
 * (next_fire_time, version, enabled) waits for the edit's row lock and then finds the new version,
 * so a firing planned on the old definition changes nothing (fire-crons.ts).
 */
import type { Db } from '../db';
import type { CronChanges } from '../../cron-store';
import type { CronRecord } from '../../../domain/cron/cron-definition';
import { CronRow, cronFromRow } from '../../sql/cron-rows';

/** Stores a new definition. @throws the database error 23505 when the id exists */
export async function createCron(db: Db, c: CronRecord): Promise<void> {
  await db.query(
    `INSERT INTO cron_tasks (id, partition, name, cron_expression, timezone, template, tenant_id, overlap_policy,
       catch_up, max_catch_up, enabled, next_fire_time, last_fire_time, version, seq, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, nextval('cron_seq'), $15, $16)`,
    [
      c.id,
      c.partition,
      c.name,
      c.cronExpression,
      c.timezone,
      JSON.stringify(c.template),
      c.tenantId,
      c.overlapPolicy,
      c.catchUp,
      c.maxCatchUp,
      c.enabled ? 1 : 0,
      c.nextFireTime,
      c.lastFireTime,
      c.version,
      c.createdAt,
      c.updatedAt,
    ],
  );
}

/** Applies `changes` (absent fields stay), version + 1, updated_at = now. @returns the definition after the edit, or null */
export async function updateCron(db: Db, id: string, c: CronChanges, now: number): Promise<CronRecord | null> {
  const { rows } = await db.query<CronRow>(
    `UPDATE cron_tasks SET
       name            = COALESCE($3::text, name),
       cron_expression = COALESCE($4::text, cron_expression),
       timezone        = COALESCE($5::text, timezone),
       template        = COALESCE($6::text, template),
       overlap_policy  = COALESCE($7::text, overlap_policy),
       catch_up        = COALESCE($8::text, catch_up),
       max_catch_up    = COALESCE($9::integer, max_catch_up),
       enabled         = COALESCE($10::integer, enabled),
       next_fire_time  = CASE WHEN $11::boolean THEN $12::bigint ELSE next_fire_time END,
       version         = version + 1,
       updated_at      = $2
     WHERE id = $1 AND ($13::integer IS NULL OR version = $13::integer)
     RETURNING *`,
    [
      id,
      now,
      c.name ?? null,
      c.cronExpression ?? null,
      c.timezone ?? null,
      c.template === undefined ? null : JSON.stringify(c.template),
      c.overlapPolicy ?? null,
      c.catchUp ?? null,
      c.maxCatchUp ?? null,
      c.enabled === undefined ? null : c.enabled ? 1 : 0,
      c.nextFireTime !== undefined,
      c.nextFireTime ?? null,
      c.ifVersion ?? null,
    ],
  );
  return rows.length > 0 ? cronFromRow(rows[0]) : null;
}

/** Deletes the definition and its fire records. @returns whether there was a definition */
export async function deleteCron(db: Db, id: string): Promise<boolean> {
  const { rowCount } = await db.query(`DELETE FROM cron_tasks WHERE id = $1`, [id]);
  if (!rowCount) return false;
  await db.query(`DELETE FROM cron_fires WHERE cron_id = $1`, [id]);
  return true;
}
