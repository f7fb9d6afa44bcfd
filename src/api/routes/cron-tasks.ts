import type { FastifyInstance } from 'fastify';
import {
  cronCreateSchema,
  cronPatchSchema,
  cronPreviewSchema,
  cronRunsQuerySchema,
  getCronQuerySchema,
  listCronsQuerySchema,
} from '../../contract/cron-schemas';
import type { CronCreateBody, CronPatchBody, CronPreviewBody, CronRunsQuery, GetCronQuery, ListCronsQuery } from '../../contract/types';
import { taskIdParamsSchema } from '../../contract/task-schemas';
import type { CronService } from '../../services/cron-service';
import { cronSchema, objectSchema, pageSchema, responses } from '../openapi/responses';
import { refuseBody } from '../no-body';
import { validatedByService } from '../validated-by-service';

const tags = ['cron'];
const fireRecord = {
  type: 'object',
  properties: {
    fire_time: { type: 'string', format: 'date-time' },
    outcome: { type: 'string', enum: ['created', 'caught_up', 'skipped'] },
    reason: { type: ['string', 'null'] },
    task_id: { type: ['string', 'null'] },
    status: { type: ['string', 'null'] },
    recorded_at: { type: 'string', format: 'date-time' },
  },
} as const;
const preview = {
  type: 'object',
  properties: {
    cron_expression: { type: 'string' },
    timezone: { type: 'string' },
    from: { type: 'string', format: 'date-time' },
    fire_times: { type: 'array', items: { type: 'string', format: 'date-time' } },
    rules: { type: 'array', items: { type: 'string' } },
  },
} as const;

/**
 * Cron routes (docs/DESIGN.md §7, §10): create (201), get, list, edit (pause/resume with `enabled`),
 * delete, fire records (`/runs`), and the preview of fire times.
 */
export function cronRoutes(app: FastifyInstance, crons: CronService): void {
  app.post<{ Body: CronCreateBody; Querystring: GetCronQuery }>(
    '/api/v1/cron-tasks',
    {
      schema: {
        summary: 'Create a cron task (`?preview=N` adds the next N fire times)',
        tags,
        body: cronCreateSchema,
        querystring: getCronQuerySchema,
        response: responses({ 201: ['The cron task', cronSchema] }, [400, 413, 415, 503]),
      },
      ...validatedByService(),
    },
    async (req, reply) => reply.status(201).send(await crons.create(req.body, req.query, req.caller)),
  );

  app.post<{ Body: CronPreviewBody }>(
    '/api/v1/cron-tasks/preview',
    {
      schema: {
        summary: 'The next fire times of an expression (nothing stored)',
        tags,
        body: cronPreviewSchema,
        response: responses({ 200: ['Fire instants in UTC and the schedule rules', preview] }, [400]),
      },
      ...validatedByService(),
    },
    async (req) => crons.preview(req.body),
  );

  app.get<{ Querystring: ListCronsQuery }>(
    '/api/v1/cron-tasks',
    {
      schema: {
        summary: 'List cron tasks, newest first',
        tags,
        querystring: listCronsQuerySchema,
        response: responses({ 200: ['A page of cron tasks', pageSchema('cron_tasks', cronSchema)] }, [400]),
      },
    },
    async (req) => crons.list(req.query, req.caller),
  );

  app.get<{ Params: { id: string }; Querystring: GetCronQuery }>(
    '/api/v1/cron-tasks/:id',
    {
      schema: {
        summary: 'Read a cron task',
        tags,
        params: taskIdParamsSchema,
        querystring: getCronQuerySchema,
        response: responses({ 200: ['The cron task', cronSchema] }, [400, 404]),
      },
    },
    async (req) => crons.get(req.params.id, req.query, req.caller),
  );

  app.patch<{ Params: { id: string }; Body: CronPatchBody }>(
    '/api/v1/cron-tasks/:id',
    {
      schema: {
        summary: 'Change a cron task; `{enabled: false}` pauses, `{enabled: true}` resumes',
        tags,
        params: taskIdParamsSchema,
        body: cronPatchSchema,
        response: responses({ 200: ['The cron task', cronSchema] }, [400, 404]),
      },
      ...validatedByService(),
    },
    async (req) => crons.update(req.params.id, req.body, req.caller),
  );

  app.delete<{ Params: { id: string } }>(
    '/api/v1/cron-tasks/:id',
    {
      schema: {
        summary: 'Delete a cron task (instances already created stay)',
        tags,
        params: taskIdParamsSchema,
        response: responses({ 200: ['`{cron_id, deleted: true}`', objectSchema] }, [400, 404]),
      },
      ...refuseBody,
    },
    async (req) => crons.delete(req.params.id, req.caller),
  );

  app.get<{ Params: { id: string }; Querystring: CronRunsQuery }>(
    '/api/v1/cron-tasks/:id/runs',
    {
      schema: {
        summary: 'Fire records, latest fire time first',
        tags,
        params: taskIdParamsSchema,
        querystring: cronRunsQuerySchema,
        response: responses({ 200: ['A page of fire records', pageSchema('runs', fireRecord)] }, [400, 404]),
      },
    },
    async (req) => crons.runs(req.params.id, req.query, req.caller),
  );
}
