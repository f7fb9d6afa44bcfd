/**
 * Opening the embedded store's main connection: the file is opened with the settings of every
 * connection (connection.ts), migrated to this build's schema, and its partition count checked
 * against the configured one (a store is partitioned once, when created).
 */
import fs from 'node:fs';
import path from 'node:path';
import type Database from 'better-sqlite3';
import { SchemaChange, StoreConfigError } from '../store';
import { openConnection } from './connection';
import { migrate, SCHEMA_VERSION } from './migrations';
import { openRefusalOf } from './store-preflight';

/**
 * Page cache (KiB) of the main connection once the writer has its own thread: 16 MiB. It then
 * only reads (a task, a workflow, a cron, expired leases: point reads and short index ranges);
 * the writer keeps 64 MiB (connection.ts). Migrations run before, with the full 64 MiB.
 */
export const MAIN_READS_CACHE_KIB = 16384;

/**
 * Opens, migrates and checks the store at `file` (`:memory:` for tests; a file's folder is created
 * if missing: the service checks the path before, store-preflight.ts).
 * @param partitions the configured partition count; recorded in `meta` when the store is new
 * @param options.readsCacheKib page cache (KiB) the connection keeps after the migrations; unset,
 *   it keeps the 64 MiB of a connection that writes
 * @returns the open connection and the schema change applied (null when none)
 * @throws StoreConfigError when the store was created with another partition count, is newer than
 *   this build, or cannot be used (corrupt, not a database, not writable: openRefusalOf)
 */
export function openStoreFile(
  file: string,
  partitions: number,
  options: { readsCacheKib?: number } = {},
): { db: Database.Database; change: SchemaChange | null } {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  let db: Database.Database;
  try {
    db = openConnection(file);
  } catch (err) {
    throw openRefusalOf(err, file);
  }
  try {
    const from = db.pragma('user_version', { simple: true }) as number;
    const applied = migrate(db);
    const change = applied.length > 0 ? { from, to: SCHEMA_VERSION, applied } : null;
    const stored = db.prepare(`SELECT value FROM meta WHERE key = 'partitions'`).pluck().get() as string | undefined;
    if (stored === undefined) {
      db.prepare(`INSERT INTO meta (key, value) VALUES ('partitions', ?)`).run(String(partitions));
    } else if (Number(stored) !== partitions) {
      throw new StoreConfigError(
        `invalid configuration: partitions (env PARTITIONS): the store ${file} was created with ${stored} partitions, not ${partitions}`,
      );
    }
    if (options.readsCacheKib !== undefined) db.pragma(`cache_size = -${Math.round(options.readsCacheKib)}`);
    return { db, change };
  } catch (err) {
    db.close();
    throw openRefusalOf(err, file);
  }
}
