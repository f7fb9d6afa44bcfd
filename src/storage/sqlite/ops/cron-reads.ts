/**
 * Cron reads on the reading connection — getCron, listCrons (newest first, cursor on seq),
 * loadDueCrons (enabled, next_fire_time ≤ until, earliest first; index cron_tasks_due),
 * listCronFires (latest fire time first, with each instance's current state; cursor on fire
 * time), cronsWithQueuedInstances (index tasks_cron_live). Each is a single statement: a
 * consistent snapshot of committed writes.
 */
import type Database from 'better-sqlite3';
import { CronRecord } from '../../../domain/cron/cron-definition';
import { TaskState } from '../../../domain/task';
import { CronFireView, CronListQuery } from '../../cron-store';
import { decodeCursor, encodeCursor } from '../../cursor';
import { CronFireRow, CronRow, cronFromRow, fireFromRow } from '../../sql/cron-rows';
import { TERMINAL_STATES } from '../../../domain/task';
import { TRANSITIONS } from '../../../domain/state-machine';
import { sqlNotStates, sqlStates } from '../../sql/state-sql';

export function prepareCronReads(db: Database.Database) {
  const getOne = db.prepare(`SELECT * FROM cron_tasks WHERE id = ?`);
  const list = db.prepare(`
    SELECT * FROM cron_tasks
    WHERE seq < @before AND (@tenant IS NULL OR tenant_id = @tenant) AND (@enabled IS NULL OR enabled = @enabled)
    ORDER BY seq DESC LIMIT @limit`);
  const due = db.prepare(`
    SELECT * FROM cron_tasks WHERE enabled = 1 AND next_fire_time IS NOT NULL AND next_fire_time <= ?
    ORDER BY next_fire_time LIMIT ?`);
  const fires = db.prepare(`
    SELECT f.*, t.state AS task_state FROM cron_fires f LEFT JOIN tasks t ON t.id = f.task_id
    WHERE f.cron_id = ? AND f.fire_time < ? ORDER BY f.fire_time DESC LIMIT ?`);
  const queued = db
    .prepare(
      `
    SELECT DISTINCT cron_id FROM tasks
    WHERE cron_id IS NOT NULL AND ${sqlNotStates([...TERMINAL_STATES])} AND ${sqlStates(TRANSITIONS.releaseQueued.from)}
    LIMIT ?`,
    )
    .pluck();

  return {
    getCron(id: string): CronRecord | null {
      const row = getOne.get(id) as CronRow | undefined;
      return row ? cronFromRow(row) : null;
    },
    listCrons(q: CronListQuery): { crons: CronRecord[]; nextCursor: string | null } {
      const before = q.cursor === undefined ? Number.MAX_SAFE_INTEGER : decodeCursor(q.cursor);
      const enabled = q.enabled === undefined ? null : q.enabled ? 1 : 0;
      const rows = list.all({ before, tenant: q.tenantId ?? null, enabled, limit: q.limit + 1 }) as CronRow[];
      const more = rows.length > q.limit;
      const page = rows.slice(0, q.limit);
      return { crons: page.map(cronFromRow), nextCursor: more ? encodeCursor(page[page.length - 1].seq) : null };
    },
    loadDueCrons(until: number, limit: number): CronRecord[] {
      return (due.all(until, limit) as CronRow[]).map(cronFromRow);
    },
    listCronFires(cronId: string, q: { limit: number; cursor?: string }): { fires: CronFireView[]; nextCursor: string | null } {
      const before = q.cursor === undefined ? Number.MAX_SAFE_INTEGER : decodeCursor(q.cursor);
      const rows = fires.all(cronId, before, q.limit + 1) as Array<CronFireRow & { task_state: string | null }>;
      const more = rows.length > q.limit;
      const page = rows.slice(0, q.limit);
      return {
        fires: page.map((r) => ({ ...fireFromRow(r), taskState: r.task_state as TaskState | null })),
        nextCursor: more ? encodeCursor(page[page.length - 1].fire_time) : null,
      };
    },
    cronsWithQueuedInstances(limit: number): string[] {
      return queued.all(limit) as string[];
    },
  };
}

export type CronReads = ReturnType<typeof prepareCronReads>;
