import { ValidationError } from '../domain/errors';
import { Caller } from './caller';

type WithMetadata = { metadata?: Record<string, unknown> & { tenant_id?: unknown } };

/**
 * A submission as `caller` may make it: for a tenant's key, `metadata.tenant_id` becomes the key's
 * tenant (a body cannot act for another tenant); an admin's body is kept as it is.
 * @param field the metadata's path in errors (`metadata`, `tasks[3].metadata`)
 * @throws ValidationError (`<field>.tenant_id`) when the body names another tenant
 */
export function withCallerTenant<T extends WithMetadata>(body: T, caller: Caller, field = 'metadata'): T {
  if (caller.admin || caller.tenantId === null) return body;
  const named = body.metadata?.tenant_id;
  if (named !== undefined && named !== caller.tenantId) {
    throw new ValidationError(`${field}.tenant_id`, "is not the API key's tenant; leave it out or use the key's tenant");
  }
  return { ...body, metadata: { ...(body.metadata ?? {}), tenant_id: caller.tenantId } };
}

/**
 * The tenant filter a caller's listings get: its own tenant, or the admin's filter as given.
 * @throws ValidationError (field `tenant`) when a tenant's key names another tenant: answering with
 *   its own tenant's rows instead would let a script act on the wrong tenant's crons or tasks
 */
export function tenantFilter(caller: Caller, requested: string | undefined): string | undefined {
  if (caller.admin) return requested;
  if (requested !== undefined && requested !== caller.tenantId)
    throw new ValidationError('tenant', "is not the API key's tenant; leave it out or use the key's tenant");
  return caller.tenantId ?? undefined;
}
