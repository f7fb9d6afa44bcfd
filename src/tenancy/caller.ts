/**
 * Who makes a request (docs/TENANTS.md): the tenant its API key belongs to, or an admin. Without
 * configured keys every caller is {@link OPEN_CALLER} (an admin of every tenant); in-cluster callers
 * of the actor-message API are trusted the same way.
 */
export interface Caller {
  /** The key's tenant; null for an admin key (or no keys configured). */
  tenantId: string | null;
  admin: boolean;
}

export const OPEN_CALLER: Caller = Object.freeze({ tenantId: null, admin: true });

/** True when `caller` may see and change what belongs to `tenantId`. */
export function canAccess(caller: Caller, tenantId: string): boolean {
  return caller.admin || caller.tenantId === tenantId;
}
