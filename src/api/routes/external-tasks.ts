import type { FastifyInstance } from 'fastify';
import {
  externalCheckpointSchema,
  externalCompletionSchema,
  externalHeartbeatSchema,
  externalProgressSchema,
} from '../../contract/external-schemas';
import { taskIdParamsSchema } from '../../contract/task-schemas';
import type { ExternalCheckpointBody, ExternalCompletionBody, ExternalHeartbeatBody, ExternalProgressBody } from '../../contract/types';
import type { ExternalTaskService } from '../../services/external-task-service';
import { objectSchema, responses } from '../openapi/responses';

/** Bodies are validated once, by the service (shared with the actor messages); the schemas describe them. */
const validatedByService = { validatorCompiler: () => () => true };

const tags = ['external consumers'];

/** Reports of external consumers on attempts of external queues: complete, heartbeat, checkpoint, progress. */
export function externalTaskRoutes(app: FastifyInstance, external: ExternalTaskService): void {
  app.post<{ Params: { id: string }; Body: ExternalCompletionBody }>(
    '/api/v1/tasks/:id/complete',
    {
      schema: {
        summary: 'Complete an attempt of an external task (`{attempt, result?}` or `{attempt, error: {message, permanent?, type?}}`)',
        tags,
        params: taskIdParamsSchema,
        body: externalCompletionSchema,
        response: responses(
          { 200: ['Recorded: `{task_id, attempt, status}` (the state the attempt moved the task to)', objectSchema] },
          [400, 404, 409, 415, 503],
        ),
      },
      ...validatedByService,
    },
    async (req) => external.complete(req.params.id, req.body, req.caller),
  );

  app.post<{ Params: { id: string }; Body: ExternalHeartbeatBody }>(
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

  app.post<{ Params: { id: string }; Body: ExternalCheckpointBody }>(
    '/api/v1/tasks/:id/checkpoint',
    {
      schema: {
        summary:
          "Save a checkpoint of an external task's running attempt (`{attempt, value}`; at most 64 KiB of JSON): its next attempt resumes from it",
        tags,
        params: taskIdParamsSchema,
        body: externalCheckpointSchema,
        response: responses({ 200: ['Stored: `{task_id, attempt, saved_at, size_bytes}`', objectSchema] }, [400, 404, 409, 413, 415]),
      },
      ...validatedByService,
    },
    async (req) => external.checkpoint(req.params.id, req.body, req.caller),
  );

  app.post<{ Params: { id: string }; Body: ExternalProgressBody }>(
    '/api/v1/tasks/:id/progress',
    {
      schema: {
        summary: "Report the progress of an external task's running attempt (`{attempt, progress}`)",
        tags,
        params: taskIdParamsSchema,
        body: externalProgressSchema,
        response: responses({ 200: ['Stored: `{task_id, attempt, progress_at}`', objectSchema] }, [400, 404, 409, 415]),
      },
      ...validatedByService,
    },
    async (req) => external.progress(req.params.id, req.body, req.caller),
  );
}
