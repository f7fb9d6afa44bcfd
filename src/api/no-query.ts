import type { FastifyRequest, RouteOptions } from 'fastify';
import { clipEcho, ValidationError } from '../domain/errors';

/**
 * fastify `onRoute` hook: an `/api/` route without a `querystring` schema takes no query
 * parameters, so one sent is refused with 400 VALIDATION_FAILED naming it ("is not a known
 * field", as a route with a schema answers), instead of being silently ignored. Runs as a
 * `preValidation` hook added to each such route.
 */
export function refuseQueryWithoutSchema(route: RouteOptions): void {
  if (!route.url.startsWith('/api/') || route.schema?.querystring !== undefined) return;
  const existing =
    route.preValidation === undefined ? [] : Array.isArray(route.preValidation) ? route.preValidation : [route.preValidation];
  route.preValidation = [...existing, refuseQuery];
}

/** @throws ValidationError naming the first query parameter, if any */
async function refuseQuery(req: FastifyRequest): Promise<void> {
  const first = Object.keys((req.query ?? {}) as Record<string, unknown>)[0];
  if (first !== undefined)
    throw new ValidationError(first === '' ? 'query' : clipEcho(first), 'is not a known field: this route takes no query parameters');
}
