import type { FastifyInstance } from 'fastify';
import {
  getWorkflowQuerySchema,
  listWorkflowsQuerySchema,
  workflowIdParamsSchema,
  workflowSubmissionSchema,
} from '../../contract/workflow-schemas';
import { traceparentHeadersSchema } from '../../contract/traceparent';
import type { GetWorkflowQuery, ListWorkflowsQuery, WorkflowSubmissionBody } from '../../contract/types';
import { waitMsOf } from '../../contract/wait-query';
import { clientGone } from '../client-gone';
import type { WorkflowService } from '../../services/workflow-service';
import { objectSchema, pageSchema, responses, workflowSchema } from '../openapi/responses';
import { traceparentOf } from '../trace-header';
import { refuseBody } from '../no-body';
import { validatedByService } from '../validated-by-service';

const tags = ['workflows'];

/**
 * Workflow routes (docs/DESIGN.md §8, §10): submit a DAG, read one, list, cancel.
 * @param bodyLimit largest workflow body in bytes (`workflowBodyLimitBytes`)
 */
export function workflowRoutes(app: FastifyInstance, workflows: WorkflowService, bodyLimit: number): void {
  app.post<{ Body: WorkflowSubmissionBody }>(
    '/api/v1/workflows',
    {
      bodyLimit,
      schema: {
        summary: 'Submit a workflow (a DAG of tasks, stored atomically)',
        tags,
        headers: traceparentHeadersSchema,
        body: workflowSubmissionSchema,
        response: responses({ 202: ['Stored: roots PENDING (or SCHEDULED), the rest BLOCKED', workflowSchema] }, [400, 413, 415, 429, 503]),
      },
      ...validatedByService(),
    },
    async (req, reply) => reply.status(202).send(await workflows.submit(req.body, req.caller, { traceparent: traceparentOf(req) })),
  );

  app.get<{ Params: { id: string }; Querystring: GetWorkflowQuery }>(
    '/api/v1/workflows/:id',
    {
      schema: {
        summary: "Read a workflow with each task's state and timings (`?wait=SECONDS` answers once it is terminal, or at the timeout)",
        tags,
        params: workflowIdParamsSchema,
        querystring: getWorkflowQuerySchema,
        response: responses({ 200: ['The workflow', workflowSchema] }, [400, 404, 429]),
      },
    },
    async (req, reply) => {
      const timeoutMs = waitMsOf(req.query.wait);
      if (timeoutMs === undefined) return workflows.get(req.params.id, req.caller);
      return workflows.getWhenEnded(req.params.id, req.caller, { timeoutMs, signal: clientGone(reply) });
    },
  );

  app.get<{ Querystring: ListWorkflowsQuery }>(
    '/api/v1/workflows',
    {
      schema: {
        summary: 'List workflows, newest first (without their tasks)',
        tags,
        querystring: listWorkflowsQuerySchema,
        response: responses({ 200: ['A page of workflows', pageSchema('workflows', workflowSchema)] }, [400]),
      },
    },
    async (req) => workflows.list(req.query, req.caller),
  );

  app.post<{ Params: { id: string } }>(
    '/api/v1/workflows/:id/cancel',
    {
      schema: {
        summary: 'Cancel a workflow',
        tags,
        params: workflowIdParamsSchema,
        response: responses(
          { 200: ['Cancelled', objectSchema], 202: ['Running tasks are being aborted (`running_task_ids`)', objectSchema] },
          [400, 404, 409],
        ),
      },
      ...refuseBody,
    },
    async (req, reply) => {
      const res = await workflows.cancel(req.params.id, req.caller);
      return reply.status(res.code).send(res.body);
    },
  );
}
