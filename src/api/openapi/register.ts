import type { FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';

/** Where the generated document and the reference page are served (open without a key). */
export const OPENAPI_PATH = '/openapi.json';
export const DOCS_PREFIX = '/docs';

/** The name of the bearer security scheme in the document. */
export const BEARER_SCHEME = 'bearerAuth';

/**
 * Registers OpenAPI generation (docs/OPERATIONS.md): `@fastify/swagger` builds an OpenAPI 3.1 document from
 * every route's `schema` (body, params, querystring, response, summary, tags), served at
 * `/openapi.json`; `@fastify/swagger-ui` serves an interactive reference at `/docs` from the
 * package's own assets (no CDN; the online validator badge is off). Must run before the routes
 * are declared (swagger collects them through an `onRoute` hook).
 * OpenAPI 3.1 because the schemas use JSON Schema 2020-12 forms (`type: [..., "null"]`, numeric
 * `exclusiveMinimum`) that 3.0 does not have.
 * @param opts.authRequired API keys are configured: every operation requires the bearer scheme
 *   (except those declaring `security: []`, the probes)
 * @param opts.version the service version shown in `info.version`
 */
export function registerOpenApi(app: FastifyInstance, opts: { authRequired: boolean; version: string }): void {
  void app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'actor-task-scheduler REST API',
        version: opts.version,
        description:
          'Submit tasks to run now, later, on a cron schedule or as a DAG workflow; read, list, cancel, replay. ' +
          'Errors are `{"error": {"code", "message", "details"}}` (codes in docs/API.md).',
      },
      tags: [
        { name: 'tasks', description: 'Submit, read, list, change and cancel tasks' },
        { name: 'dead-letter', description: 'Tasks that used up their retries' },
        { name: 'cron', description: 'Recurring tasks' },
        { name: 'workflows', description: 'DAGs of tasks' },
        { name: 'admin', description: 'Tenants, rate limits, audit (admin key)' },
        { name: 'operations', description: 'Health, readiness, metrics' },
      ],
      components: {
        securitySchemes: {
          [BEARER_SCHEME]: { type: 'http', scheme: 'bearer', description: 'An API key: `Authorization: Bearer <key>`' },
        },
      },
      ...(opts.authRequired ? { security: [{ [BEARER_SCHEME]: [] }] } : {}),
    },
  });
  void app.register(swaggerUi, {
    routePrefix: DOCS_PREFIX,
    uiConfig: { validatorUrl: null, deepLinking: true },
    staticCSP: true,
  });
  app.get(OPENAPI_PATH, { schema: { hide: true } }, async () => app.swagger());
}

/** True for the paths of the document and the reference page (served without a key). */
export function isDocsPath(path: string): boolean {
  return path === OPENAPI_PATH || path === DOCS_PREFIX || path.startsWith(`${DOCS_PREFIX}/`);
}
