/**
 * listOverflow — inputs: limit, tenants to leave out. Output: held tasks (state OVERFLOW) as
 * {id, tenantId}, oldest first (by seq, the submission order), at most `limit`. Guarantee: one
 * statement on the reading connection over the partial index `tasks_overflow` (migration 014):
 * its cost follows the tasks held, not the table.
 */
import type Database from 'better-sqlite3';
import type { HeldTask } from '../../../domain/overflow-policy';

export function prepareListOverflow(db: Database.Database): (limit: number, excludeTenants?: readonly string[]) => HeldTask[] {
  const stmt = db.prepare(`
    SELECT id, tenant_id FROM tasks INDEXED BY tasks_overflow
    WHERE state = 'OVERFLOW' AND tenant_id NOT IN (SELECT value FROM json_each(?))
    ORDER BY seq LIMIT ?`);
  return (limit, excludeTenants = []) =>
    (stmt.all(JSON.stringify(excludeTenants), limit) as Array<{ id: string; tenant_id: string }>).map((r) => ({
      id: r.id,
      tenantId: r.tenant_id,
    }));
}
