import type { FastifyInstance } from 'fastify';
import { rateLimitPutSchema, taskTypeParamsSchema, tenantIdParamsSchema, tenantPutSchema } from '../../contract/tenant-schemas';
import type { TenantAdmin } from '../../tenancy/tenant-admin';

/** Bodies are validated by the service (one check for REST and actor messages); see tasks.ts. */
const validatedByService = { validatorCompiler: () => () => true };

/** Admin routes for tenant weights and rate limits (issue 5). */
export function tenantRoutes(app: FastifyInstance, admin: TenantAdmin): void {
  app.put<{ Params: { id: string } }>(
    '/api/v1/tenants/:id',
    { schema: { params: tenantIdParamsSchema, body: tenantPutSchema }, ...validatedByService },
    async (req) => admin.putTenant(req.params.id, req.body, req.caller),
  );
  app.get('/api/v1/tenants', async (req) => admin.listTenants(req.caller));
  app.put<{ Params: { task_type: string } }>(
    '/api/v1/rate-limits/:task_type',
    { schema: { params: taskTypeParamsSchema, body: rateLimitPutSchema }, ...validatedByService },
    async (req) => admin.putRateLimit(req.params.task_type, req.body, req.caller),
  );
  app.delete<{ Params: { task_type: string } }>(
    '/api/v1/rate-limits/:task_type',
    { schema: { params: taskTypeParamsSchema } },
    async (req) => admin.deleteRateLimit(req.params.task_type, req.caller),
  );
  app.get('/api/v1/rate-limits', async (req) => admin.listRateLimits(req.caller));
}
