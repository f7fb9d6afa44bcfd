/**
 * Cron definition writes — createCron (insert; a duplicate id throws), updateCron (the given
 * fields, version + 1, RETURNING the row; with `ifVersion` only on the row at that version),
 * deleteCron (the definition and its fire records; its
 * instances stay as ordinary tasks). Each is one statement group inside a group-commit savepoint,
 * so an edit and a firing never interleave: a firing that read the old version fails its
 * compare-and-set (fire-crons.ts).
 */
import type Database from 'better-sqlite3';
import { CronRecord } from '../../../domain/cron/cron-definition';
import { CronChanges } from '../../cron-store';
import { CronRow, cronFromRow } from '../../sql/cron-rows';

export function prepareCreateCron(db: Database.Database): (cron: CronRecord) => void {
  const insert = db.prepare(`
    INSERT INTO cron_tasks (id, partition, name, cron_expression, timezone, template, tenant_id, overlap_policy,
      catch_up, max_catch_up, enabled, next_fire_time, last_fire_time, version, seq, created_at, updated_at)
    VALUES (@id, @partition, @name, @cronExpression, @timezone, @template, @tenantId, @overlapPolicy,
      @catchUp, @maxCatchUp, @enabled, @nextFireTime, @lastFireTime, @version,
      (SELECT COALESCE(MAX(seq), 0) + 1 FROM cron_tasks), @createdAt, @updatedAt)`);
  return (c) => {
    insert.run({ ...c, template: JSON.stringify(c.template), enabled: c.enabled ? 1 : 0 });
  };
}

export function prepareUpdateCron(db: Database.Database): (id: string, changes: CronChanges, now: number) => CronRecord | null {
  const update = db.prepare(`
    UPDATE cron_tasks SET
      name            = COALESCE(@name, name),
      cron_expression = COALESCE(@cronExpression, cron_expression),
      timezone        = COALESCE(@timezone, timezone),
      template        = COALESCE(@template, template),
      overlap_policy  = COALESCE(@overlapPolicy, overlap_policy),
      catch_up        = COALESCE(@catchUp, catch_up),
      max_catch_up    = COALESCE(@maxCatchUp, max_catch_up),
      enabled         = COALESCE(@enabled, enabled),
      next_fire_time  = CASE WHEN @setNext = 1 THEN @nextFireTime ELSE next_fire_time END,
      version         = version + 1,
      updated_at      = @now
    WHERE id = @id AND (@ifVersion IS NULL OR version = @ifVersion)
    RETURNING *`);
  return (id, c, now) => {
    const row = update.get({
      id,
      now,
      name: c.name ?? null,
      cronExpression: c.cronExpression ?? null,
      timezone: c.timezone ?? null,
      template: c.template === undefined ? null : JSON.stringify(c.template),
      overlapPolicy: c.overlapPolicy ?? null,
      catchUp: c.catchUp ?? null,
      maxCatchUp: c.maxCatchUp ?? null,
      enabled: c.enabled === undefined ? null : c.enabled ? 1 : 0,
      setNext: c.nextFireTime === undefined ? 0 : 1,
      nextFireTime: c.nextFireTime ?? null,
      ifVersion: c.ifVersion ?? null,
    }) as CronRow | undefined;
    return row ? cronFromRow(row) : null;
  };
}

export function prepareDeleteCron(db: Database.Database): (id: string) => boolean {
  const del = db.prepare(`DELETE FROM cron_tasks WHERE id = ?`);
  const delFires = db.prepare(`DELETE FROM cron_fires WHERE cron_id = ?`);
  return (id) => {
    const deleted = del.run(id).changes > 0;
    if (deleted) delFires.run(id);
    return deleted;
  };
}
