import type { FastifyInstance } from 'fastify';
import {
  batchSubmissionSchema,
  getTaskQuerySchema,
  listTasksQuerySchema,
  taskIdParamsSchema,
  taskPatchSchema,
  taskSubmissionSchema,
} from '../../contract/task-schemas';
import { traceparentHeadersSchema } from '../../contract/traceparent';
import type { GetTaskQuery, ListTasksQuery, TaskBatchBody, TaskPatchBody, TaskSubmissionBody } from '../../contract/types';
import type { TaskService } from '../../services/task-service';
import { ackSchema, cancelSchema, pageSchema, responses, taskSchema } from '../openapi/responses';
import { traceparentOf } from '../trace-header';
import { refuseBody } from '../no-body';
import { attemptLogParamsSchema, attemptLogSchema } from '../../contract/attempt-log-json';
import { waitMsOf } from '../../contract/wait-query';
import { clientGone } from '../client-gone';
import { validatedByService } from '../validated-by-service';

const tags = ['tasks'];

/** Task routes of docs/DESIGN.md §10: submit, batch submit, get, list, cancel. */
export function taskRoutes(app: FastifyInstance, service: TaskService, batchMax: number): void {
  app.post<{ Body: TaskSubmissionBody }>(
    '/api/v1/tasks',
    {
      schema: {
        summary: 'Submit a task',
        tags,
        headers: traceparentHeadersSchema,
        body: taskSubmissionSchema,
        response: responses(
          {
            202: ['Stored', ackSchema],
            200: ['A repeat of an idempotent request: the original task (header `Idempotent-Replayed: true`)', ackSchema],
          },
          [400, 409, 413, 415, 429, 503],
        ),
      },
      ...validatedByService(),
    },
    async (req, reply) => {
      const ack = await service.submit(req.body, req.caller, { traceparent: traceparentOf(req) });
      // A repeat of an earlier request with the same idempotency key: 200 and the original task.
      if (ack.idempotent_replayed) return reply.status(200).header('idempotent-replayed', 'true').send(ack);
      return reply.status(202).send(ack);
    },
  );

  app.post<{ Body: TaskBatchBody }>(
    '/api/v1/tasks/batch',
    {
      schema: {
        summary: 'Submit up to batchMaxTasks tasks at once (all stored, or none)',
        tags,
        headers: traceparentHeadersSchema,
        body: batchSubmissionSchema(batchMax),
        response: responses(
          { 202: ['Every task stored', { type: 'object', properties: { tasks: { type: 'array', items: ackSchema } } }] },
          [400, 409, 413, 415, 429, 503],
        ),
      },
      ...validatedByService(),
    },
    async (req, reply) => reply.status(202).send(await service.submitBatch(req.body, req.caller, { traceparent: traceparentOf(req) })),
  );

  app.get<{ Params: { id: string }; Querystring: GetTaskQuery }>(
    '/api/v1/tasks/:id',
    {
      schema: {
        summary:
          'Read a task (`?include=attempts` adds the history of every attempt; `?wait=SECONDS` answers once it is terminal, or at the timeout)',
        tags,
        params: taskIdParamsSchema,
        querystring: getTaskQuerySchema,
        response: responses({ 200: ['The task', taskSchema] }, [400, 404, 429]),
      },
    },
    async (req, reply) => {
      const include = { attempts: req.query.include === 'attempts' };
      const timeoutMs = waitMsOf(req.query.wait);
      if (timeoutMs === undefined) return service.get(req.params.id, include, req.caller);
      return service.getWhenEnded(req.params.id, include, req.caller, { timeoutMs, signal: clientGone(reply) });
    },
  );

  app.get<{ Params: { id: string; attempt: string } }>(
    '/api/v1/tasks/:id/attempts/:attempt/logs',
    {
      schema: {
        summary: "An attempt's `ctx.log` lines (the last 200 lines / 64 KiB of each attempt)",
        tags,
        params: attemptLogParamsSchema,
        response: responses({ 200: ["The attempt's kept lines, oldest first", attemptLogSchema] }, [400, 404]),
      },
    },
    async (req) => service.attemptLog(req.params.id, Number(req.params.attempt), req.caller),
  );

  app.get<{ Querystring: ListTasksQuery }>(
    '/api/v1/tasks',
    {
      schema: {
        summary: 'List tasks, newest first (summaries without payload and result)',
        tags,
        querystring: listTasksQuerySchema,
        response: responses({ 200: ['A page of tasks', pageSchema('tasks', taskSchema)] }, [400]),
      },
    },
    async (req) => service.list(req.query, req.caller),
  );

  app.patch<{ Params: { id: string }; Body: TaskPatchBody }>(
    '/api/v1/tasks/:id',
    {
      schema: {
        summary: 'Change a task that has not started (time, priority, payload)',
        tags,
        params: taskIdParamsSchema,
        body: taskPatchSchema,
        response: responses({ 200: ['The changed task', taskSchema] }, [400, 404, 409]),
      },
      ...validatedByService(),
    },
    async (req) => service.update(req.params.id, req.body, req.caller),
  );

  app.post<{ Params: { id: string } }>(
    '/api/v1/tasks/:id/cancel',
    {
      schema: {
        summary: 'Cancel a task',
        tags,
        params: taskIdParamsSchema,
        response: responses(
          {
            200: ['Cancelled: `{task_id, status: CANCELLED, cancelled_at}`', cancelSchema],
            202: ['Running: its handler is being aborted (`cancel_requested: true`, `cancelled_at` null)', cancelSchema],
          },
          [400, 404, 409],
        ),
      },
      ...refuseBody,
    },
    async (req, reply) => {
      const res = await service.cancel(req.params.id, req.caller);
      return reply.status(res.code).send(res.body);
    },
  );
}
