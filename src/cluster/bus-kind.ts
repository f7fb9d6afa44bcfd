/**
 * Which bus a cluster member sends and hears its peers' messages on (wake-ups, cancels, cron
 * changes, pull demands and grants; docs/CLUSTER.md): Redis pub/sub when `REDIS_URL` is set,
 * else the PostgreSQL store's LISTEN/NOTIFY, else none (MongoDB without Redis). Members on
 * different buses do not hear each other; each records its own in its member record
 * (`MemberRecord.bus`) and compares (`bus-agreement.ts`).
 */
export type BusKind = 'redis' | 'postgres' | 'none';

/** The bus of a member started with this configuration (the choice `bootstrap.ts` makes). */
export function busKindOf(config: { redisUrl: string | null; store: string; postgresUrl?: string | null }): BusKind {
  if (config.redisUrl !== null && config.redisUrl.trim() !== '') return 'redis';
  if (config.store === 'postgres' && config.postgresUrl) return 'postgres';
  return 'none';
}
