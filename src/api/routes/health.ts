import type { FastifyInstance } from 'fastify';
import type { SchedulerService } from '../../service';
import type { SchedulerMetrics } from '../../observability/metrics';
import { requireAdmin } from '../auth';

/** Liveness, readiness and the Prometheus endpoint. */
export function healthRoutes(app: FastifyInstance, service: SchedulerService, metrics: SchedulerMetrics): void {
  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/readyz', async (_req, reply) => {
    const r = await service.ready();
    return reply.status(r.ready ? 200 : 503).send({ status: r.ready ? 'ready' : 'not_ready', store: r.store });
  });

  app.get('/metrics', async (req, reply) => {
    requireAdmin(req, 'GET /metrics');
    const text = await metrics.registry.metrics();
    return reply.header('content-type', metrics.registry.contentType).send(text);
  });
}
