import type { FastifyInstance } from 'fastify';
import { externalCompletionSchema, externalHeartbeatSchema } from '../../contract/external-schemas';
import { taskIdParamsSchema } from '../../contract/task-schemas';
import type { ExternalTaskService } from '../../external/external-task-service';
import { objectSchema, responses } from '../openapi/responses';

/** Bodies are validated once, by the service (shared with the actor messages); the schemas describe them. */
const validatedByService = { validatorCompiler: () => () => true };

const tags = ['external consumers'];

/** Reports of external consumers on attempts of external queues (issue 7): complete, heartbeat. */
export function externalTaskRoutes(app: FastifyInstance, external: ExternalTaskService): void {
  app.post<{ Params: { id: string } }>(
    '/api/v1/tasks/:id/complete',
    {
      schema: {
        summary: 'Complete an attempt of an external task (`{attempt, result?}` or `{attempt, error: {message, permanent?, type?}}`)',
        tags,
        params: taskIdParamsSchema,
        body: externalCompletionSchema,
        response: responses({ 200: ['Recorded: `{task_id, attempt, status}` (the state the attempt moved the task to)', objectSchema] }, [400, 404, 409, 415, 503]),
      },
      ...validatedByService,
    },
    async (req) => external.complete(req.params.id, req.body, req.caller),
  );

  app.post<{ Params: { id: string } }>(
    '/api/v1/tasks/:id/heartbeat',
    {
      schema: {
        summary: "Extend the lease of an external task's running attempt (`{attempt}`)",
        tags,
        params: taskIdParamsSchema,
        body: externalHeartbeatSchema,
        response: responses({ 200: ['Extended: `{task_id, attempt, lease_expires_at}`', objectSchema] }, [400, 404, 409, 415]),
      },
      ...validatedByService,
    },
    async (req) => external.heartbeat(req.params.id, req.body, req.caller),
  );
}
