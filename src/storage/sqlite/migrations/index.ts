import type Database from 'better-sqlite3';
import { StoreConfigError } from '../../store';
import * as m001 from './001-initial';
import * as m002 from './002-retry-cap-jitter-replay';
import * as m003 from './003-idempotency-keys';
import * as m004 from './004-cron';
import * as m005 from './005-workflows';
import * as m006 from './006-tenant-settings';
import * as m007 from './007-traceparent';
import * as m008 from './008-cluster';
import * as m009 from './009-tenant-listing';
import * as m010 from './010-split-waiting-index';
import * as m011 from './011-due-order-waiting-index';
import * as m012 from './012-checkpoints';
import * as m013 from './013-concurrency-keys';
import * as m014 from './014-overflow';
import * as m015 from './015-attempt-logs';
import * as m016 from './016-member-instance';
import * as m017 from './017-idempotency-key-expiry';
import * as m018 from './018-member-bus';

/** Every migration in order; the schema version is the position + 1 (`PRAGMA user_version`). */
const MIGRATIONS: ReadonlyArray<{ name: string; up: string }> = [
  { name: '001-initial', ...m001 },
  { name: '002-retry-cap-jitter-replay', ...m002 },
  { name: '003-idempotency-keys', ...m003 },
  { name: '004-cron', ...m004 },
  { name: '005-workflows', ...m005 },
  { name: '006-tenant-settings', ...m006 },
  { name: '007-traceparent', ...m007 },
  { name: '008-cluster', ...m008 },
  { name: '009-tenant-listing', ...m009 },
  { name: '010-split-waiting-index', ...m010 },
  { name: '011-due-order-waiting-index', ...m011 },
  { name: '012-checkpoints', ...m012 },
  { name: '013-concurrency-keys', ...m013 },
  { name: '014-overflow', ...m014 },
  { name: '015-attempt-logs', ...m015 },
  { name: '016-member-instance', ...m016 },
  { name: '017-idempotency-key-expiry', ...m017 },
  { name: '018-member-bus', ...m018 },
];

/** The schema version this build migrates to (`PRAGMA user_version` after {@link migrate}). */
export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Applies the migrations newer than the database's `user_version`, each in its own transaction.
 * @param upTo the schema version to stop at (tests of an upgrade); default {@link SCHEMA_VERSION}
 * @returns the names of the migrations applied
 * @throws StoreConfigError when the database is newer than this code (a downgrade: `npm start`
 *   exits 78 with its one line)
 */
export function migrate(db: Database.Database, upTo = SCHEMA_VERSION): string[] {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > MIGRATIONS.length) {
    throw new StoreConfigError(`the store ${db.name} has schema version ${current}, newer than this build knows (${MIGRATIONS.length})`);
  }
  const applied: string[] = [];
  for (let v = current; v < Math.min(upTo, MIGRATIONS.length); v++) {
    const m = MIGRATIONS[v];
    db.transaction(() => {
      db.exec(m.up);
      db.pragma(`user_version = ${v + 1}`);
    })();
    applied.push(m.name);
  }
  return applied;
}
