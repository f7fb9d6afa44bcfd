import type { FastifyInstance } from 'fastify';
import type { OperationsService } from '../../services/operations-service';
import type { SchedulerMetrics } from '../../observability/metrics';
import { requireAdmin } from '../auth';
import { responses } from '../openapi/responses';

const tags = ['operations'];

/** Liveness, readiness and the Prometheus endpoint. */
export function healthRoutes(app: FastifyInstance, service: OperationsService, metrics: SchedulerMetrics): void {
  app.get(
    '/healthz',
    {
      schema: {
        summary: 'Liveness probe (no key needed)',
        tags,
        security: [],
        response: responses({ 200: ['The process is up', { type: 'object', properties: { status: { type: 'string', enum: ['ok'] } } }] }),
      },
    },
    async () => ({ status: 'ok' }),
  );

  const readiness = {
    type: 'object',
    properties: {
      status: { type: 'string', enum: ['ready', 'degraded', 'not_ready'] },
      store: { type: 'boolean', description: 'The store answers a ping and has no fault' },
      partitions: {
        type: 'object',
        description:
          'Cluster mode only: partitions this member owns (lease held and fenced: their owners run), leases it holds whose partitions are still being fenced (fencing), of all (total)',
        properties: { owned: { type: 'integer' }, fencing: { type: 'integer' }, total: { type: 'integer' } },
      },
      redis: {
        type: 'string',
        enum: ['up', 'down'],
        description: 'Only with REDIS_URL set. `down`: status `degraded` (local rate limits)',
      },
      store_fault: {
        type: 'object',
        description:
          'Only while the store cannot take writes (status `not_ready`): `fault` (`file_deleted`, `file_replaced`, `corrupt`, `disk_full`, `io_error`, `read_only`, `cannot_open`, `connection_lost`, `tables_missing`, `permission_denied`, `stalled`), the file or server (`target`), the `cause`, whether the service resumes by itself (`recoverable`), `since` (ISO 8601) and one `message` line',
        properties: {
          fault: { type: 'string' },
          target: { type: 'string' },
          cause: { type: 'string' },
          recoverable: { type: 'boolean' },
          since: { type: 'string', format: 'date-time' },
          message: { type: 'string' },
        },
      },
    },
  };
  app.get(
    '/readyz',
    {
      schema: {
        summary:
          'Readiness probe: accepting work and the store answers; in cluster mode, joined, with the partitions owned (no key needed)',
        tags,
        security: [],
        response: responses({
          200: [
            "Ready (`degraded`: Redis is configured but unreachable, refuses the limits' commands, or has not let this node subscribe to the coordination channels yet; the node fires from the store with local rate limits)",
            readiness,
          ],
          503: ['Starting, draining, the store does not answer or cannot take writes (`store_fault`)', readiness],
        }),
      },
    },
    async (_req, reply) => {
      const r = await service.ready();
      const status = !r.ready ? 'not_ready' : r.redis === 'down' ? 'degraded' : 'ready';
      return reply.status(r.ready ? 200 : 503).send({
        status,
        store: r.store,
        ...(r.partitions ? { partitions: r.partitions } : {}),
        ...(r.redis ? { redis: r.redis } : {}),
        ...(r.storeFault ? { store_fault: r.storeFault } : {}),
      });
    },
  );

  app.get(
    '/metrics',
    {
      schema: {
        summary: 'Prometheus metrics (admin key); see docs/OPERATIONS.md',
        tags,
        produces: ['text/plain'],
        response: {
          200: { description: 'Prometheus text exposition format', content: { 'text/plain': { schema: { type: 'string' } } } },
          ...responses({}, [403]),
        },
      },
    },
    async (req, reply) => {
      requireAdmin(req, 'GET /metrics');
      const text = await metrics.registry.metrics();
      return reply.header('content-type', metrics.registry.contentType).send(text);
    },
  );
}
