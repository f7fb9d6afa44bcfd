import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config';
import type { SchedulerMetrics } from '../observability/metrics';
import type { Services } from '../services';
import { ApiKeys } from '../tenancy/api-keys';
import { buildApp } from './app';
import type { HttpsOptions } from './tls';

/**
 * The fastify app over the services (not listening). `logger`: pino; omit for a silent app.
 * `https`: the certificate and key to serve HTTPS with (tls.ts `httpsOptionsOf`); omit for HTTP.
 */
export function appFor(
  s: Services,
  config: Config,
  metrics: SchedulerMetrics,
  logger?: Logger,
  https?: HttpsOptions | null,
): FastifyInstance {
  return buildApp({
    service: s.service,
    operations: s.operations,
    crons: s.crons,
    metrics,
    bodyLimitBytes: config.bodyLimitBytes,
    batchMaxTasks: config.batchMaxTasks,
    ...(logger ? { logger } : {}),
    workflows: s.workflows,
    workflowBodyLimitBytes: config.workflowBodyLimitBytes,
    tenants: s.tenants,
    apiKeys: new ApiKeys(config.apiKeys),
    external: s.external,
    completeBodyLimitBytes: completeBodyLimitOf(config),
    pull: s.pull,
    https: https ?? null,
    waiters: s.waiters,
  });
}

/**
 * The complete route's body limit: `bodyLimitBytes`, or twice `maxResultBytes` and 64 KiB more when
 * that is larger (a result's JSON may be sent with escapes its stored text does not have, beside a
 * 4,096-character error message), so a result over `maxResultBytes` reaches the rule that ends the
 * attempt `result_too_large` (docs/API.md "External queues"). Larger bodies are still 413.
 */
export function completeBodyLimitOf(config: Pick<Config, 'bodyLimitBytes' | 'maxResultBytes'>): number {
  return Math.max(config.bodyLimitBytes, 2 * config.maxResultBytes + 65_536);
}
