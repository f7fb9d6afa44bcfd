import type { FastifyInstance } from 'fastify';
import { deadLetterQuerySchema, taskIdParamsSchema } from '../../contract/task-schemas';
import type { DeadLetterQuery } from '../../contract/types';
import type { TaskService } from '../../services/task-service';
import { objectSchema, pageSchema, responses, taskSchema } from '../openapi/responses';
import { refuseBody } from '../no-body';

const tags = ['dead-letter'];

/** Dead-letter queue routes (docs/FAILURES.md): list, replay, delete. */
export function deadLetterRoutes(app: FastifyInstance, service: TaskService): void {
  app.get<{ Querystring: DeadLetterQuery }>(
    '/api/v1/dead-letter',
    {
      schema: {
        summary: 'List DEAD tasks, newest first',
        tags,
        querystring: deadLetterQuerySchema,
        response: responses({ 200: ['A page of DEAD tasks (summaries)', pageSchema('tasks', taskSchema)] }, [400]),
      },
    },
    async (req) => service.listDeadLetter(req.query, req.caller),
  );

  app.post<{ Params: { id: string } }>(
    '/api/v1/dead-letter/:id/replay',
    {
      schema: {
        summary: 'Run a DEAD task again with a fresh retry budget',
        tags,
        params: taskIdParamsSchema,
        response: responses({ 200: ['`{task_id, status: PENDING}`', objectSchema] }, [400, 404, 409]),
      },
      ...refuseBody,
    },
    async (req) => service.replayDeadLetter(req.params.id, req.caller),
  );

  app.delete<{ Params: { id: string } }>(
    '/api/v1/dead-letter/:id',
    {
      schema: {
        summary: 'Delete a DEAD task and its history',
        tags,
        params: taskIdParamsSchema,
        response: responses({ 200: ['`{task_id, deleted: true}`', objectSchema] }, [400, 404, 409]),
      },
      ...refuseBody,
    },
    async (req) => service.deleteDeadLetter(req.params.id, req.caller),
  );
}
