/**
 * Concurrency limits — write: putConcurrencyLimit (inputs: key, max_running or null, now; an
 * upsert `INSERT … ON CONFLICT (key) DO UPDATE`, or a delete for null; one statement inside the
 * caller's transaction); read on the pool: listConcurrencyLimits (every row by key, one statement:
 * a consistent snapshot). Guarantee: a key has at most one row; of two nodes writing one key, the
 * later commit wins.
 */
import type { Db } from '../db';
import type { ConcurrencyLimitRecord } from '../../concurrency-store';

/** Sets the most tasks of `key` running at once, or removes the limit (null). */
export async function putConcurrencyLimit(db: Db, key: string, maxRunning: number | null, now: number): Promise<void> {
  if (maxRunning === null) {
    await db.query(`DELETE FROM concurrency_limits WHERE key = $1`, [key]);
    return;
  }
  await db.query(
    `INSERT INTO concurrency_limits (key, max_running, updated_at) VALUES ($1, $2, $3)
     ON CONFLICT (key) DO UPDATE SET max_running = excluded.max_running, updated_at = excluded.updated_at`,
    [key, maxRunning, now],
  );
}

/** Every limit, by key. */
export async function listConcurrencyLimits(db: Db): Promise<ConcurrencyLimitRecord[]> {
  const { rows } = await db.query<{ key: string; max_running: number; updated_at: number }>(
    `SELECT key, max_running, updated_at FROM concurrency_limits ORDER BY key COLLATE "C"`,
  );
  return rows.map((r) => ({ key: r.key, maxRunning: r.max_running, updatedAt: r.updated_at }));
}
