import type { FastifyInstance } from 'fastify';
import { rateLimitPutSchema, taskTypeParamsSchema, tenantIdParamsSchema, tenantPutSchema } from '../../contract/tenant-schemas';
import type { RateLimitPutBody, TenantPutBody } from '../../contract/types';
import type { TenantAdmin } from '../../services/tenant-admin';
import { objectSchema, responses } from '../openapi/responses';
import { refuseBody } from '../no-body';
import { validatedByService } from '../validated-by-service';

const tags = ['admin'];
const tenant = {
  type: 'object',
  properties: {
    tenant_id: { type: 'string' },
    weight: { type: 'number' },
    rate_limit: { type: ['object', 'null'] },
    deleted: { type: 'boolean', description: 'DELETE only: whether stored settings were removed' },
  },
} as const;
const rateLimit = {
  type: 'object',
  properties: { task_type: { type: 'string' }, rate_per_second: { type: 'number' }, burst: { type: 'number' } },
} as const;

/** Admin routes for tenant weights and rate limits (docs/TENANTS.md). */
export function tenantRoutes(app: FastifyInstance, admin: TenantAdmin): void {
  app.put<{ Params: { id: string }; Body: TenantPutBody }>(
    '/api/v1/tenants/:id',
    {
      schema: {
        summary: "Set a tenant's weight and start rate limit (stored, applied at once)",
        tags,
        params: tenantIdParamsSchema,
        body: tenantPutSchema,
        response: responses({ 200: ['The tenant settings in force', tenant] }, [400, 403]),
      },
      ...validatedByService(),
    },
    async (req) => admin.putTenant(req.params.id, req.body, req.caller),
  );
  app.delete<{ Params: { id: string } }>(
    '/api/v1/tenants/:id',
    {
      schema: {
        summary: "Delete a tenant's stored settings (its tasks are not touched)",
        description:
          "Removes the weight and start rate limit stored for the tenant: the config file's values (or weight 1, no limit) apply " +
          'again. A tenant is named by its tasks, not registered: its tasks, cron tasks and workflows keep running. Idempotent.',
        tags,
        params: tenantIdParamsSchema,
        response: responses(
          {
            200: [
              '`{tenant_id, deleted, weight, rate_limit}`: whether stored settings were removed, and the settings now in force',
              tenant,
            ],
          },
          [400, 403],
        ),
      },
      ...refuseBody,
      ...validatedByService(),
    },
    async (req) => admin.deleteTenant(req.params.id, req.caller),
  );
  app.get(
    '/api/v1/tenants',
    {
      schema: {
        summary: 'List tenants with settings',
        tags,
        response: responses(
          { 200: ['`{tenants: [...]}`', { type: 'object', properties: { tenants: { type: 'array', items: tenant } } }] },
          [400, 403],
        ),
      },
    },
    async (req) => admin.listTenants(req.caller),
  );
  app.put<{ Params: { task_type: string }; Body: RateLimitPutBody }>(
    '/api/v1/rate-limits/:task_type',
    {
      schema: {
        summary: 'Limit the starts of a task type (token bucket)',
        tags,
        params: taskTypeParamsSchema,
        body: rateLimitPutSchema,
        response: responses({ 200: ['The limit in force', rateLimit] }, [400, 403]),
      },
      ...validatedByService(),
    },
    async (req) => admin.putRateLimit(req.params.task_type, req.body, req.caller),
  );
  app.delete<{ Params: { task_type: string } }>(
    '/api/v1/rate-limits/:task_type',
    {
      schema: {
        summary: "Remove a task type's start limit",
        tags,
        params: taskTypeParamsSchema,
        response: responses(
          { 200: ["`{task_type, deleted: true, rate_limit}`: `rate_limit` now in force (the config file's, or null)", objectSchema] },
          [400, 403],
        ),
      },
      ...refuseBody,
    },
    async (req) => admin.deleteRateLimit(req.params.task_type, req.caller),
  );
  app.get(
    '/api/v1/rate-limits',
    {
      schema: {
        summary: 'List task-type start limits',
        tags,
        response: responses(
          { 200: ['`{rate_limits: [...]}`', { type: 'object', properties: { rate_limits: { type: 'array', items: rateLimit } } }] },
          [400, 403],
        ),
      },
    },
    async (req) => admin.listRateLimits(req.caller),
  );
}
