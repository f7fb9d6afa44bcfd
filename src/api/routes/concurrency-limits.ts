import type { FastifyInstance } from 'fastify';
import { concurrencyKeyParamsSchema, concurrencyLimitPutSchema } from '../../contract/tenant-schemas';
import type { ConcurrencyLimitPutBody } from '../../contract/types';
import type { ConcurrencyAdmin } from '../../services/concurrency-admin';
import { objectSchema, responses } from '../openapi/responses';
import { refuseBody } from '../no-body';
import { validatedByService } from '../validated-by-service';

const tags = ['admin'];
const limit = {
  type: 'object',
  properties: {
    key: { type: 'string' },
    max_running: { type: ['integer', 'null'], description: 'null: no limit (unlimited)' },
    running: { type: 'integer', description: 'attempts with this key running on the node that answered' },
  },
} as const;

/** Admin routes for the limits per concurrency key. */
export function concurrencyLimitRoutes(app: FastifyInstance, admin: ConcurrencyAdmin): void {
  app.put<{ Params: { key: string }; Body: ConcurrencyLimitPutBody }>(
    '/api/v1/concurrency-limits/:key',
    {
      schema: {
        summary: 'Cap the attempts of tasks with a concurrency key that run at once (stored, applied at once, cluster-wide)',
        tags,
        params: concurrencyKeyParamsSchema,
        body: concurrencyLimitPutSchema,
        response: responses({ 200: ['The limit in force', limit] }, [400, 403]),
      },
      ...validatedByService(),
    },
    async (req) => admin.put(req.params.key, req.body, req.caller),
  );
  app.get<{ Params: { key: string } }>(
    '/api/v1/concurrency-limits/:key',
    {
      schema: {
        summary: "A concurrency key's limit (null: unlimited) and its running attempts",
        tags,
        params: concurrencyKeyParamsSchema,
        response: responses({ 200: ['The limit in force', limit] }, [400, 403]),
      },
    },
    async (req) => admin.get(req.params.key, req.caller),
  );
  app.delete<{ Params: { key: string } }>(
    '/api/v1/concurrency-limits/:key',
    {
      schema: {
        summary: "Remove a concurrency key's limit (it becomes unlimited)",
        tags,
        params: concurrencyKeyParamsSchema,
        response: responses({ 200: ['`{key, deleted: true}`', objectSchema] }, [400, 403]),
      },
      ...refuseBody,
    },
    async (req) => admin.delete(req.params.key, req.caller),
  );
  app.get(
    '/api/v1/concurrency-limits',
    {
      schema: {
        summary: 'List the concurrency limits',
        tags,
        response: responses(
          {
            200: ['`{concurrency_limits: [...]}`', { type: 'object', properties: { concurrency_limits: { type: 'array', items: limit } } }],
          },
          [400, 403],
        ),
      },
    },
    async (req) => admin.list(req.caller),
  );
}
