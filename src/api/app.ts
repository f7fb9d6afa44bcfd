import Fastify, { FastifyBaseLogger, FastifyInstance, LogController } from 'fastify';
import sjson from 'secure-json-parse';
import type { Logger } from 'pino';
import { MalformedJsonError, RouteNotFoundError } from '../domain/errors';
import type { SchedulerMetrics } from '../observability/metrics';
import type { SchedulerService } from '../service';
import { errorHandler } from './error-handler';
import { healthRoutes } from './routes/health';
import { taskRoutes } from './routes/tasks';

export interface AppDeps {
  service: SchedulerService;
  metrics: SchedulerMetrics;
  /** Largest accepted request body in bytes (→ 413 above). */
  bodyLimitBytes: number;
  batchMaxTasks: number;
  /** pino logger; omit for a silent app (tests). */
  logger?: Logger;
}

/**
 * Builds the fastify app without listening (fastify's testing guide: `build()` apart from
 * `listen()`; tests call `app.inject()`). JSON bodies are parsed with prototype-poisoning
 * protection; an empty JSON body counts as no body; validation neither coerces types nor drops
 * unknown fields, so REST and actor messages accept exactly the same input.
 */
export function buildApp(deps: AppDeps): FastifyInstance {
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger | undefined,
    bodyLimit: deps.bodyLimitBytes,
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: false } },
    // Per-request log lines would dominate the log at thousands of submissions a second.
    logController: new LogController({ disableRequestLogging: true }),
  });
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = body as string;
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, sjson.parse(text));
    } catch (err) {
      done(new MalformedJsonError((err as Error).message), undefined);
    }
  });
  app.setErrorHandler(errorHandler(deps.bodyLimitBytes));
  app.setNotFoundHandler((req, reply) => {
    const err = new RouteNotFoundError(req.method, req.url.split('?')[0]);
    void reply.status(err.status).send(err.toJSON());
  });
  taskRoutes(app, deps.service, deps.batchMaxTasks);
  healthRoutes(app, deps.service, deps.metrics);
  return app;
}
