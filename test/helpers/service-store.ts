/**
 * The test-only store switch of the single-node service tests: with `TEST_SERVICE_STORE=postgres`
 * (and POSTGRES_URL set) every service the test helpers start (test/helpers/service-process.ts,
 * test/helpers/in-process-scheduler.ts) runs on PostgreSQL instead of its SQLite file, in a schema
 * of its own. The schema belongs to the service's data dir: its name is made from the dir's path,
 * so a service restarted on the same dir finds its data again, a fresh dir gets a fresh schema, and
 * nothing is written into the dir. Schemas are named `svc_<mocha pid>_<hash of the dir>`: the
 * fixtures drop theirs with their dir ({@link dropServiceSchema}), and a root `after` hook drops
 * whatever else this mocha process made.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import { Client } from 'pg';
import { dropSchema, postgresUrl } from './postgres-schema';

/** True when the service tests run on PostgreSQL (`TEST_SERVICE_STORE=postgres` and POSTGRES_URL set). */
export function servicesOnPostgres(): boolean {
  return process.env.TEST_SERVICE_STORE === 'postgres' && postgresUrl() !== undefined;
}

/**
 * For a suite that is about the SQLite file itself: when the services run on PostgreSQL, registers
 * one skipped test that says why (`reason`) and returns true; the suite then registers nothing
 * else (`if (skipOnPostgresServices('…')) return;` first in its `describe`).
 */
export function skipOnPostgresServices(reason: string): boolean {
  if (!servicesOnPostgres()) return false;
  it.skip(`skipped under TEST_SERVICE_STORE=postgres: ${reason}`, () => undefined);
  return true;
}

/** The schema of `dataDir`: the same name for the same dir (a restart finds its data); undefined on SQLite. */
export function serviceSchema(dataDir: string): string | undefined {
  if (!servicesOnPostgres()) return undefined;
  const hash = createHash('sha256').update(path.resolve(dataDir)).digest('hex').slice(0, 16);
  return `svc_${process.pid}_${hash}`;
}

/** The environment that puts a service process on `dataDir`'s PostgreSQL schema; `{}` on SQLite. */
export function serviceStoreEnv(dataDir: string): Record<string, string> {
  const schema = serviceSchema(dataDir);
  if (schema === undefined) return {};
  return { SCHEDULER_STORE: 'postgres', POSTGRES_URL: postgresUrl() as string, POSTGRES_SCHEMA: schema };
}

/** The config overrides that put an in-process scheduler on `dataDir`'s PostgreSQL schema; `{}` on SQLite. */
export function serviceStoreOverrides(dataDir: string): Record<string, unknown> {
  const schema = serviceSchema(dataDir);
  if (schema === undefined) return {};
  return { store: 'postgres', postgresUrl: postgresUrl(), postgresSchema: schema };
}

/** Drops the schema of `dataDir` if the services run on PostgreSQL (call when the dir is removed). */
export async function dropServiceSchema(dataDir: string): Promise<void> {
  const schema = serviceSchema(dataDir);
  if (schema !== undefined) await dropSchema(postgresUrl() as string, schema);
}

/** Whether `dataDir`'s schema exists (a service started on it created its store); false on SQLite. */
export async function serviceSchemaExists(dataDir: string): Promise<boolean> {
  const schema = serviceSchema(dataDir);
  if (schema === undefined) return false;
  const c = new Client({ connectionString: postgresUrl() as string });
  await c.connect();
  try {
    return (await c.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema])).rowCount === 1;
  } finally {
    await c.end();
  }
}

/** Drops every schema this mocha process made (those of dirs a test removed without the fixtures). */
async function dropLeftoverSchemas(url: string): Promise<void> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query<{ nspname: string }>(`SELECT nspname FROM pg_namespace WHERE nspname LIKE $1`, [
      `svc\\_${process.pid}\\_%`,
    ]);
    for (const r of rows) await c.query(`DROP SCHEMA IF EXISTS ${r.nspname} CASCADE`);
  } finally {
    await c.end();
  }
}

// Root hook (this module is loaded by test files only while mocha loads them).
if (servicesOnPostgres() && typeof after === 'function') {
  after(async function () {
    this.timeout(60_000);
    await dropLeftoverSchemas(postgresUrl() as string);
  });
}
