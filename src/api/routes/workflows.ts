import type { FastifyInstance } from 'fastify';
import { listWorkflowsQuerySchema, workflowIdParamsSchema, workflowSubmissionSchema } from '../../contract/workflow-schemas';
import type { WorkflowService } from '../../workflows/workflow-service';

/** Workflow bodies are validated once, by the service (as task submissions are: see tasks.ts). */
const validatedByService = { validatorCompiler: () => () => true };

/**
 * Workflow routes (DESIGN §8, §10): submit a DAG, read one, list, cancel.
 * @param bodyLimit largest workflow body in bytes (`workflowBodyLimitBytes`)
 */
export function workflowRoutes(app: FastifyInstance, workflows: WorkflowService, bodyLimit: number): void {
  app.post('/api/v1/workflows', { bodyLimit, schema: { body: workflowSubmissionSchema }, ...validatedByService }, async (req, reply) =>
    reply.status(202).send(await workflows.submit(req.body, req.caller)),
  );

  app.get<{ Params: { id: string } }>(
    '/api/v1/workflows/:id',
    { schema: { params: workflowIdParamsSchema } },
    async (req) => workflows.get(req.params.id, req.caller),
  );

  app.get('/api/v1/workflows', { schema: { querystring: listWorkflowsQuerySchema } }, async (req) => workflows.list(req.query, req.caller));

  app.post<{ Params: { id: string } }>(
    '/api/v1/workflows/:id/cancel',
    { schema: { params: workflowIdParamsSchema } },
    async (req, reply) => {
      const res = await workflows.cancel(req.params.id, req.caller);
      return reply.status(res.code).send(res.body);
    },
  );
}
