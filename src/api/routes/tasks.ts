import type { FastifyInstance } from 'fastify';
import {
  batchSubmissionSchema,
  getTaskQuerySchema,
  listTasksQuerySchema,
  taskIdParamsSchema,
  taskPatchSchema,
  taskSubmissionSchema,
} from '../../contract/task-schemas';
import type { SchedulerService } from '../../service';

/**
 * Submission bodies are validated once, by the service, against these same schemas (so REST and
 * actor messages share one check); the routes keep the schemas for the API description and skip
 * fastify's own pass over bodies of up to 1,000 tasks.
 */
const validatedByService = { validatorCompiler: () => () => true };

/** Task routes of DESIGN §10: submit, batch submit, get, list, cancel. */
export function taskRoutes(app: FastifyInstance, service: SchedulerService, batchMax: number): void {
  app.post('/api/v1/tasks', { schema: { body: taskSubmissionSchema }, ...validatedByService }, async (req, reply) => {
    const ack = await service.submit(req.body, req.caller);
    // A repeat of an earlier request with the same idempotency key: 200 and the original task.
    if (ack.idempotent_replayed) return reply.status(200).header('idempotent-replayed', 'true').send(ack);
    return reply.status(202).send(ack);
  });

  app.post(
    '/api/v1/tasks/batch',
    { schema: { body: batchSubmissionSchema(batchMax) }, ...validatedByService },
    async (req, reply) => reply.status(202).send(await service.submitBatch(req.body, req.caller)),
  );

  app.get<{ Params: { id: string }; Querystring: { include?: string } }>(
    '/api/v1/tasks/:id',
    { schema: { params: taskIdParamsSchema, querystring: getTaskQuerySchema } },
    async (req) => service.get(req.params.id, { attempts: req.query.include === 'attempts' }, req.caller),
  );

  app.get('/api/v1/tasks', { schema: { querystring: listTasksQuerySchema } }, async (req) => service.list(req.query, req.caller));

  app.patch<{ Params: { id: string } }>(
    '/api/v1/tasks/:id',
    { schema: { params: taskIdParamsSchema, body: taskPatchSchema }, ...validatedByService },
    async (req) => service.update(req.params.id, req.body, req.caller),
  );

  app.post<{ Params: { id: string } }>(
    '/api/v1/tasks/:id/cancel',
    { schema: { params: taskIdParamsSchema } },
    async (req, reply) => {
      const res = await service.cancel(req.params.id, req.caller);
      return reply.status(res.code).send(res.body);
    },
  );
}
