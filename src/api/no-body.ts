import type { FastifyRequest } from 'fastify';
import { clipEcho, ValidationError } from '../domain/errors';

/**
 * Route option for actions that take no body (cancel, replay, delete). A body other than none, `{}` or
 * JSON `null` (an empty JSON body counts as none, see app.ts) is refused with 400
 * VALIDATION_FAILED naming its first field (`body` when it is not an object), so that a field a
 * client thinks it sent (`{"reason": …}`) is never silently dropped. Runs as a fastify
 * `preValidation` hook, after the JSON body is parsed.
 * @throws ValidationError
 */
export const refuseBody = {
  preValidation: async (req: FastifyRequest): Promise<void> => {
    const body: unknown = req.body;
    if (body === undefined || body === null) return;
    if (typeof body !== 'object' || Array.isArray(body)) throw new ValidationError('body', 'this action takes no body (send none, or {})');
    const first = Object.keys(body)[0];
    if (first === undefined) return;
    // An empty key names the body; a long one is cut (it is quoted in the message and in details).
    throw new ValidationError(first === '' ? 'body' : clipEcho(first), 'unknown field: this action takes no body (send none, or {})');
  },
};
