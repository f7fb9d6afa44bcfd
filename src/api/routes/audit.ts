import type { FastifyInstance } from 'fastify';
import type { OperationsService } from '../../services/operations-service';
import { requireAdmin } from '../auth';
import { objectSchema, responses } from '../openapi/responses';

/** The audit reconciler's report (docs/FAILURES.md): runs a pass now and answers what it found. */
export function auditRoutes(app: FastifyInstance, service: OperationsService): void {
  app.get(
    '/api/v1/audit',
    {
      schema: {
        summary: 'Run an audit pass now: overdue tasks, expired leases, blocked workflow tasks in limbo',
        tags: ['admin'],
        response: responses(
          { 200: ['`{checked_at, overdue, expired_leases, blocked_limbo}`, each with a count and up to 100 ids', objectSchema] },
          [400, 403],
        ),
      },
    },
    async (req) => {
      requireAdmin(req, 'GET /api/v1/audit');
      return service.audit();
    },
  );
}
