import type { FastifyRequest } from 'fastify';
import { ValidationError } from '../domain/errors';

/**
 * The raw `traceparent` header of a submission, or undefined. Sent twice it is malformed (the W3C
 * spec has a single value), answered 400 on field `traceparent`; the value itself is checked by
 * the service (`checkTraceparent`), like every other submitted field.
 */
export function traceparentOf(req: FastifyRequest): string | undefined {
  const h = req.headers.traceparent;
  if (Array.isArray(h)) throw new ValidationError('traceparent', 'header traceparent must be given once');
  return h;
}
