import type { FastifyInstance } from 'fastify';
import { deadLetterQuerySchema, taskIdParamsSchema } from '../../contract/task-schemas';
import type { SchedulerService } from '../../service';

/** Dead-letter queue routes (issue 3): list, replay, delete. */
export function deadLetterRoutes(app: FastifyInstance, service: SchedulerService): void {
  app.get('/api/v1/dead-letter', { schema: { querystring: deadLetterQuerySchema } }, async (req) => service.listDeadLetter(req.query, req.caller));

  app.post<{ Params: { id: string } }>(
    '/api/v1/dead-letter/:id/replay',
    { schema: { params: taskIdParamsSchema } },
    async (req) => service.replayDeadLetter(req.params.id, req.caller),
  );

  app.delete<{ Params: { id: string } }>(
    '/api/v1/dead-letter/:id',
    { schema: { params: taskIdParamsSchema } },
    async (req) => service.deleteDeadLetter(req.params.id, req.caller),
  );
}
