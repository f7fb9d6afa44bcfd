import type { FastifyInstance } from 'fastify';
import {
  cronCreateSchema,
  cronPatchSchema,
  cronPreviewSchema,
  cronRunsQuerySchema,
  getCronQuerySchema,
  listCronsQuerySchema,
} from '../../contract/cron-schemas';
import { taskIdParamsSchema } from '../../contract/task-schemas';
import type { CronService } from '../../cron/cron-service';

/** Bodies are validated by the service (one check for REST and actor messages); see tasks.ts. */
const validatedByService = { validatorCompiler: () => () => true };

/**
 * Cron routes (DESIGN §7, §10): create (201), get, list, edit (pause/resume with `enabled`),
 * delete, fire records (`/runs`), and the preview of fire times.
 */
export function cronRoutes(app: FastifyInstance, crons: CronService): void {
  app.post(
    '/api/v1/cron-tasks',
    { schema: { body: cronCreateSchema, querystring: getCronQuerySchema }, ...validatedByService },
    async (req, reply) => reply.status(201).send(await crons.create(req.body, req.query, req.caller)),
  );

  app.post('/api/v1/cron-tasks/preview', { schema: { body: cronPreviewSchema }, ...validatedByService }, async (req) => crons.preview(req.body));

  app.get('/api/v1/cron-tasks', { schema: { querystring: listCronsQuerySchema } }, async (req) => crons.list(req.query, req.caller));

  app.get<{ Params: { id: string } }>(
    '/api/v1/cron-tasks/:id',
    { schema: { params: taskIdParamsSchema, querystring: getCronQuerySchema } },
    async (req) => crons.get(req.params.id, req.query, req.caller),
  );

  app.patch<{ Params: { id: string } }>(
    '/api/v1/cron-tasks/:id',
    { schema: { params: taskIdParamsSchema, body: cronPatchSchema }, ...validatedByService },
    async (req) => crons.update(req.params.id, req.body, req.caller),
  );

  app.delete<{ Params: { id: string } }>(
    '/api/v1/cron-tasks/:id',
    { schema: { params: taskIdParamsSchema } },
    async (req) => crons.delete(req.params.id, req.caller),
  );

  app.get<{ Params: { id: string } }>(
    '/api/v1/cron-tasks/:id/runs',
    { schema: { params: taskIdParamsSchema, querystring: cronRunsQuerySchema } },
    async (req) => crons.runs(req.params.id, req.query, req.caller),
  );
}
