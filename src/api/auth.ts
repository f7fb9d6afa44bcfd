import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ForbiddenError, UnauthorizedError } from '../domain/errors';
import { ApiKeys } from '../tenancy/api-keys';
import { Caller, OPEN_CALLER } from '../tenancy/caller';
import { isDocsPath } from './openapi/register';
import { isUiRoute } from './ui';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who sent the request (set by the auth hook before any route runs). */
    caller: Caller;
  }
}

/** Paths served without a key: liveness and readiness probes (and the API description and the dashboard, below). */
const OPEN_PATHS = new Set(['/healthz', '/readyz']);

/**
 * Bearer-key authentication (docs/TENANTS.md): with keys configured, every request but the probes and the
 * API description (`/openapi.json`, `/docs`) and the dashboard's static files (`/ui`, `/ui/…`), which
 * hold no tenant data (the dashboard's own API calls carry its key), needs
 * `Authorization: Bearer <key>` (401 `UNAUTHORIZED` otherwise) and runs as that key's
 * {@link Caller}; without keys every request runs as an admin ({@link OPEN_CALLER}).
 * A request with more than one `Authorization` header was refused before this hook runs (400
 * `DUPLICATE_HEADER`, duplicate-headers.ts), on every path, keys or not.
 */
export function registerAuth(app: FastifyInstance, keys: ApiKeys | undefined): void {
  app.decorateRequest('caller', null as unknown as Caller);
  app.addHook('onRequest', async (req) => {
    const path = req.url.split('?')[0];
    if (!keys?.enabled || OPEN_PATHS.has(path) || isDocsPath(path) || isUiRoute(req.routeOptions.url)) {
      req.caller = OPEN_CALLER;
      return;
    }
    const caller = keys.authenticate(req.headers.authorization);
    if (!caller) throw new UnauthorizedError(req.headers.authorization ? 'unknown API key' : 'missing Authorization: Bearer <key>');
    req.caller = caller;
  });
}

/** @throws ForbiddenError unless the request comes from an admin */
export function requireAdmin(req: FastifyRequest, operation: string): void {
  if (!req.caller.admin) throw new ForbiddenError(operation);
}
