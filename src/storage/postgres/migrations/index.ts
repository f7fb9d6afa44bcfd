/**
 * The PostgreSQL store's migrations: append-only and numbered, each applied once and recorded in
 * `schema_migrations`; all those pending run in one transaction, so a failed start leaves the
 * schema as it was. Several service processes may open one database
 * at the same moment: the migration runs under a transaction-level advisory lock, so one applies
 * and the others find the work done.
 */
import { StoreConfigError } from '../../store';
import type { Db } from '../db';
import * as m001 from './001-initial';
import * as m002 from './002-lean-task-indexes';
import * as m003 from './003-member-bus';

/** Every migration in order; the schema version is the position + 1. */
const MIGRATIONS: ReadonlyArray<{ name: string; up: string }> = [
  { name: '001-initial', ...m001 },
  { name: '002-lean-task-indexes', ...m002 },
  { name: '003-member-bus', ...m003 },
];

/** The schema version this build migrates to. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/** Key of the advisory lock held while migrating (any fixed number; "sched" in ASCII). */
const MIGRATION_LOCK = 0x7363686564;

/** A connection that can run a transaction (a pooled client, held for the whole migration). */
export type MigrationConnection = Db;

/**
 * Creates `schema` if missing and applies the migrations newer than the one it records, in one
 * transaction.
 * @returns the schema version found before and the names of the migrations applied
 * @throws StoreConfigError when the database is newer than this code (a downgrade)
 */
export async function migrate(
  db: MigrationConnection,
  schema: string,
  upTo = SCHEMA_VERSION,
): Promise<{ from: number; applied: string[] }> {
  await db.query('BEGIN');
  try {
    // A migration may build an index over many rows: no statement timeout inside it (the role's or
    // the pool's), the advisory lock keeps it one at a time.
    await db.query('SET LOCAL statement_timeout = 0');
    await db.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    // Created only when missing: CREATE SCHEMA IF NOT EXISTS checks the role's CREATE on the
    // database even when the schema exists, so a role with rights on the tables alone could not
    // start on a database already migrated.
    const found = await db.query<{ schema: boolean; table: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1) AS schema, to_regclass($2) IS NOT NULL AS table`,
      [schema, `${schema}.schema_migrations`],
    );
    if (!found.rows[0].schema) await db.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    if (!found.rows[0].table)
      await db.query(
        `CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
      );
    const { rows } = await db.query<{ v: number | null }>('SELECT max(version) AS v FROM schema_migrations');
    const from = rows[0]?.v ?? 0;
    if (from > MIGRATIONS.length) {
      throw new StoreConfigError(
        `the PostgreSQL store (schema ${schema}) has schema version ${from}, newer than this build knows (${MIGRATIONS.length})`,
      );
    }
    const applied: string[] = [];
    for (let v = from; v < Math.min(upTo, MIGRATIONS.length); v++) {
      const m = MIGRATIONS[v];
      await db.query(m.up);
      await db.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [v + 1, m.name]);
      applied.push(m.name);
    }
    await db.query('COMMIT');
    return { from, applied };
  } catch (err) {
    await db.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}
