import { ConfigError, type Config } from '../config';
import type { Clock } from '../domain/clock';
import { MongoStore } from './mongo/mongo-store';
import { PostgresStore } from './postgres/postgres-store';
import { SqliteStore } from './sqlite/sqlite-store';
import type { Store } from './store';

/**
 * Makes the store named by `config.store`: SQLite at `sqlitePath` (embedded profile), PostgreSQL at
 * `postgresUrl` in schema `postgresSchema`, or MongoDB at `mongodbUri` (cluster mode: several
 * processes may share it; partitions are owned through leases, see src/cluster/partition-leases.ts).
 * @param clock the scheduler's clock: PostgreSQL and MongoDB start a claim's attempt and lease when
 *   its write runs, which can be later than the caller's `now` (their writes queue); SQLite writes at once
 * @param watchClock the timers of the SQLite file watch and of the PostgreSQL connection watch (default: the system clock)
 * @throws ConfigError (`invalid configuration: …`) when `postgres` is chosen without `postgresUrl`,
 *   or `mongodb` without `mongodbUri`
 */
export function createStore(
  config: Pick<Config, 'store' | 'sqlitePath' | 'mongodbUri'> & Partial<Pick<Config, 'postgresUrl' | 'postgresSchema'>>,
  clock?: Pick<Clock, 'now'>,
  watchClock?: Clock,
): Store {
  if (config.store === 'sqlite') return new SqliteStore(config.sqlitePath, watchClock ? { clock: watchClock } : {});
  if (config.store === 'postgres') {
    const url = config.postgresUrl ?? null;
    if (url === null || url.trim() === '') {
      throw new ConfigError(
        'invalid configuration: postgresUrl (env POSTGRES_URL) is required when store (env SCHEDULER_STORE) is "postgres"',
      );
    }
    return new PostgresStore(url, {
      schema: config.postgresSchema ?? 'public',
      ...(clock ? { clock } : {}),
      ...(watchClock ? { timers: watchClock } : {}),
    });
  }
  if (config.mongodbUri === null || config.mongodbUri.trim() === '') {
    throw new ConfigError('invalid configuration: mongodbUri (env MONGODB_URI) is required when store (env SCHEDULER_STORE) is "mongodb"');
  }
  return new MongoStore(config.mongodbUri, clock ? { clock } : {});
}
