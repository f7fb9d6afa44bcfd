import Redis from 'ioredis';
import type { Config } from '../config';
import { checkExternalQueues } from '../config';

/**
 * The ioredis client external queues write their streams with, or null when no external queue is
 * configured. A deliberately tiny factory: when the shared Redis connection module lands, bootstrap
 * hands its client to {@link StreamDispatch} instead and this file goes.
 * Commands fail after 3 reconnection attempts instead of queueing forever, so a Redis outage turns
 * into retried attempts, not a stalled dispatcher.
 * @throws ConfigError when external queues are configured without `redisUrl`
 */
export function createStreamRedis(config: Pick<Config, 'externalQueues' | 'redisUrl'>): Redis | null {
  if (Object.keys(config.externalQueues ?? {}).length === 0) return null;
  checkExternalQueues(config);
  return new Redis(config.redisUrl as string, { maxRetriesPerRequest: 3, lazyConnect: false });
}
