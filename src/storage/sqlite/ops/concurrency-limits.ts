/**
 * Concurrency limits — write: putConcurrencyLimit (inputs: key, max_running or null, now; an
 * upsert, or a delete for null; one statement inside a group-commit savepoint); read on the
 * reading connection: listConcurrencyLimits (every row by key, one statement: a consistent
 * snapshot). Guarantee: a key has at most one row; the last write wins.
 */
import type Database from 'better-sqlite3';
import { ConcurrencyLimitRecord } from '../../concurrency-store';

export function prepareConcurrencyLimitWrites(db: Database.Database) {
  const upsert = db.prepare(`
    INSERT INTO concurrency_limits (key, max_running, updated_at) VALUES (?, ?, ?)
    ON CONFLICT (key) DO UPDATE SET max_running = excluded.max_running, updated_at = excluded.updated_at`);
  const drop = db.prepare(`DELETE FROM concurrency_limits WHERE key = ?`);
  return {
    putConcurrencyLimit(key: string, maxRunning: number | null, now: number): void {
      if (maxRunning === null) drop.run(key);
      else upsert.run(key, maxRunning, now);
    },
  };
}

export function prepareConcurrencyLimitReads(db: Database.Database) {
  const all = db.prepare(`SELECT key, max_running, updated_at FROM concurrency_limits ORDER BY key`);
  return {
    listConcurrencyLimits(): ConcurrencyLimitRecord[] {
      return (all.all() as Array<{ key: string; max_running: number; updated_at: number }>).map((r) => ({
        key: r.key,
        maxRunning: r.max_running,
        updatedAt: r.updated_at,
      }));
    },
  };
}
