import type { ServerTime } from '../offset-clock';

/** Runs one statement and returns its rows (a `pg` Client, Pool or {@link PgListener}). */
export interface TimeQuery {
  query(text: string): Promise<{ rows: Array<Record<string, unknown>> }>;
}

/**
 * The statement that reads the database's clock in epoch ms (fractional: microseconds).
 * `clock_timestamp()` is the clock `now()` reads, taken when the statement runs rather than when
 * its transaction began, so the reading lies inside the round trip the offset is measured over.
 */
export const DATABASE_TIME_SQL = 'SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS ms';

/**
 * The PostgreSQL server's clock as an {@link OffsetClock} sample source: one {@link DATABASE_TIME_SQL}
 * per reading. @returns a function resolving to epoch ms; it rejects when the query fails or
 * answers something other than a finite number.
 */
export function databaseTime(db: TimeQuery): ServerTime {
  return async () => {
    const { rows } = await db.query(DATABASE_TIME_SQL);
    const ms = Number(rows[0]?.ms);
    if (!Number.isFinite(ms)) throw new Error(`the database answered no time: ${JSON.stringify(rows[0] ?? null)}`);
    return ms;
  };
}
