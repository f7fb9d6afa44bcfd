/**
 * countOverflowByTenant — inputs: none. Output: tenant → tasks held (state OVERFLOW); tenants
 * with none are absent. Guarantee: one statement on the reading connection, answered from the
 * partial index `tasks_overflow` alone (it holds the tenant): its cost follows the tasks held
 * (at most `overflow.maxTasks` plus one batch), so it runs on the caller's thread.
 */
import type Database from 'better-sqlite3';

export function prepareCountOverflow(db: Database.Database): () => Record<string, number> {
  const stmt = db.prepare(
    `SELECT tenant_id, COUNT(*) AS n FROM tasks INDEXED BY tasks_overflow WHERE state = 'OVERFLOW' GROUP BY tenant_id`,
  );
  return () => Object.fromEntries((stmt.all() as Array<{ tenant_id: string; n: number }>).map((r) => [r.tenant_id, r.n]));
}
