/**
 * Test helpers for the PostgreSQL store: a fresh schema name per store (the tests of one run share
 * the server named by POSTGRES_URL), its removal, and a direct connection for test-only writes.
 */
import { randomUUID } from 'node:crypto';
import { Client } from 'pg';

/** POSTGRES_URL, or undefined when the PostgreSQL tests cannot run (`source .ci/services.sh` sets it). */
export function postgresUrl(): string | undefined {
  const url = process.env.POSTGRES_URL;
  return url && url.trim() !== '' ? url : undefined;
}

/** A schema name no other test uses: `t_<16 hex>` (the prefix says what it is for). */
export function freshSchema(prefix = 't'): string {
  return `${prefix}_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
}

/** Runs `fn` on a client of `url` with `schema` first on its search_path, then closes it. */
export async function withClient<T>(url: string, schema: string, fn: (c: Client) => Promise<T>): Promise<T> {
  const c = new Client({ connectionString: url, options: `-c search_path=${schema}` });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** Drops `schema` and everything in it (if it exists). */
export async function dropSchema(url: string, schema: string): Promise<void> {
  await withClient(url, 'public', (c) => c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));
}

/**
 * Registers the one test that stands for a PostgreSQL suite when POSTGRES_URL is not set: failed
 * under CI (a service that did not start must fail CI), skipped otherwise. Call it inside the
 * suite's `describe`, and register nothing else then.
 */
export function registerMissingPostgres(): void {
  const title = 'needs POSTGRES_URL (`source .ci/services.sh` starts a private PostgreSQL)';
  if (process.env.CI) {
    it(title, () => {
      throw new Error('POSTGRES_URL is not set in CI');
    });
  } else {
    it.skip(title, () => undefined);
  }
}
