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
    pull: s.pull,
    https: https ?? null,
  });
}
