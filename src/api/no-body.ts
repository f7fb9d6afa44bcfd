import type { FastifyRequest } from 'fastify';
import { ValidationError } from '../domain/errors';

/**
 * Route option for actions that take no body (cancel, replay): a body other than none or `{}` is
 * refused with 400 VALIDATION_FAILED naming its first field (or `body` when it is not an object),
 * so that a field a client thinks it sent (`{"reason": …}`) is never silently dropped. Runs as a
 * fastify `preValidation` hook, after the JSON body is parsed.
 * @throws ValidationError
 */
export const refuseBody = {
  preValidation: async (req: FastifyRequest): Promise<void> => {
    const body: unknown = req.body;
    if (body === undefined || body === null) return;
    if (typeof body !== 'object' || Array.isArray(body)) throw new ValidationError('body', 'this action takes no body (send none, or {})');
    const first = Object.keys(body)[0];
    if (first !== undefined) throw new ValidationError(first, 'unknown field: this action takes no body (send none, or {})');
  },
};
