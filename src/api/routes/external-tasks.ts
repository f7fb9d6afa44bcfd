import type { FastifyInstance } from 'fastify';
import {
  externalCheckpointSchema,
  externalCompletionSchema,
  externalHeartbeatSchema,
  externalLogsSchema,
  externalProgressSchema,
  leaseRequestSchema,
  queueParamsSchema,
} from '../../contract/external-schemas';
import { taskIdParamsSchema } from '../../contract/task-schemas';
import type {
  ExternalCheckpointBody,
  ExternalCompletionBody,
  ExternalHeartbeatBody,
  ExternalLogsBody,
  ExternalProgressBody,
  LeaseRequestBody,
} from '../../contract/types';
import type { ExternalTaskService } from '../../services/external-task-service';
import type { PullLeaseService } from '../../services/pull-lease-service';
import { objectSchema, responses } from '../openapi/responses';
import { validatedByService } from '../validated-by-service';

const tags = ['external consumers'];

/**
 * Reports of external consumers on attempts of external queues: complete, heartbeat, checkpoint,
 * progress, logs; and, with `pull`, the lease requests of HTTP pull workers.
 * @param completeBodyLimit largest complete body in bytes (AppDeps `completeBodyLimitBytes`)
 */
export function externalTaskRoutes(
  app: FastifyInstance,
  external: ExternalTaskService,
  pull: PullLeaseService | undefined,
  completeBodyLimit: number,
): void {
  if (pull) pullLeaseRoute(app, pull);

  app.post<{ Params: { id: string }; Body: ExternalLogsBody }>(
    '/api/v1/tasks/:id/logs',
    {
      schema: {
        summary:
          "Append log lines to an external task's running attempt (`{attempt, lines: [{level, msg, at?, fields?}]}`, at most 200 lines), read back with GET …/attempts/{n}/logs",
        tags,
        params: taskIdParamsSchema,
        body: externalLogsSchema,
        response: responses({ 200: ['Stored: `{task_id, attempt, appended}`', objectSchema] }, [400, 404, 409, 415]),
      },
      ...validatedByService(),
    },
    async (req) => external.logs(req.params.id, req.body, req.caller),
  );

  app.post<{ Params: { id: string }; Body: ExternalCompletionBody }>(
    '/api/v1/tasks/:id/complete',
    {
      bodyLimit: completeBodyLimit,
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
      ...validatedByService(),
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
      ...validatedByService(),
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
      ...validatedByService(),
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
      ...validatedByService(),
    },
    async (req) => external.progress(req.params.id, req.body, req.caller),
  );
}

/**
 * `POST /api/v1/queues/{queue}/lease`: a long poll. The client's going away before the answer
 * (the response closed unfinished) drops its request at the dispatcher; its going away after the
 * tasks were claimed but before the answer was written out (a worker closing at that instant)
 * gives them back at once (`PullLeaseService.undelivered`), as does an answer that could not be
 * serialised (written out as an error, without them).
 */
function pullLeaseRoute(app: FastifyInstance, pull: PullLeaseService): void {
  app.post<{ Params: { queue: string }; Body: LeaseRequestBody }>(
    '/api/v1/queues/:queue/lease',
    {
      schema: {
        summary:
          'Lease up to `max` due tasks of a pull queue (`{worker_id, max?, wait_s?}`): answers as soon as one is claimed, or `{tasks: []}` after `wait_s` seconds',
        tags: ['pull workers'],
        params: queueParamsSchema,
        body: leaseRequestSchema,
        response: responses(
          {
            200: [
              '`{tasks: [{task_id, task_type, queue, tenant_id, payload, attempt, lease_expires_at, timeout_ms, idempotency_key, checkpoint, traceparent}]}`',
              objectSchema,
            ],
          },
          [400, 403, 404, 415, 503],
        ),
      },
      ...validatedByService(),
    },
    async (req, reply) => {
      const gone = new AbortController();
      const onClose = () => {
        if (!reply.raw.writableFinished) gone.abort();
      };
      reply.raw.once('close', onClose);
      let answer;
      try {
        answer = await pull.lease(req.params.queue, req.body, req.caller, gone.signal);
      } finally {
        reply.raw.off('close', onClose);
      }
      const { tasks } = answer;
      if (tasks.length > 0) {
        // Handed to the connection ('finish') before it closed, or not (light-my-request's response
        // says `finish` without `writableFinished`: the event is what both kinds of response share).
        // An answer that failed to serialise finishes as an error status without the tasks: they
        // are given back too, instead of waiting out their leases.
        let written = false;
        reply.raw.once('finish', () => (written = reply.raw.statusCode === 200));
        if (reply.raw.destroyed) pull.undelivered(tasks);
        else reply.raw.once('close', () => written || pull.undelivered(tasks));
      }
      return answer;
    },
  );
}
