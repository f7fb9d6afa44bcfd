import type { FastifyInstance } from 'fastify';
import type { SchedulerService } from '../../service';
import { requireAdmin } from '../auth';

/** The audit reconciler's report (issue 3): runs a pass now and answers what it found. */
export function auditRoutes(app: FastifyInstance, service: SchedulerService): void {
  app.get('/api/v1/audit', async (req) => {
    requireAdmin(req, 'GET /api/v1/audit');
    return service.audit();
  });
}
