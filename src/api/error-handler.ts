import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { httpStatusOf } from '../contract/error-catalog';
import { validationErrorOf } from '../contract/validation';
import { InternalError, PayloadTooLargeError, SchedulerError } from '../domain/errors';
import { MalformedJsonError, MalformedRequestError, RouteNotFoundError, UnsupportedMediaTypeError } from './http-errors';

/**
 * Maps any error to the catalog's `{error: {code, message, details}}`; its HTTP status is the
 * catalog's for its code ({@link httpStatusOf}): the one place where errors become HTTP (fastify's
 * errors included). Unknown errors are logged and answered 500 without internals, unless the store
 * has a fault (`storeFault`): then they answer its 503 `STORE_UNAVAILABLE` (a read of a store that
 * is away fails for that reason, not for one of its own).
 */
export function toSchedulerError(
  err: FastifyError | Error,
  bodyLimit: number,
  req?: FastifyRequest,
  storeFault?: () => SchedulerError | null,
): SchedulerError {
  if (err instanceof SchedulerError) return err;
  const fe = err as FastifyError;
  if (fe.validation) return validationErrorOf(fe.validation as never, fe.validationContext);
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new PayloadTooLargeError(req?.routeOptions?.bodyLimit ?? bodyLimit);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new UnsupportedMediaTypeError(String(req?.headers['content-type'] ?? ''));
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new MalformedJsonError(fe.message);
  }
  if (fe.statusCode === 413) return new PayloadTooLargeError(bodyLimit);
  if (isFileRefusal(err)) return new RouteNotFoundError(req?.method ?? 'GET', (req?.url ?? '').split('?')[0]);
  if (isClientAbort(err)) return new MalformedRequestError();
  return storeFault?.() ?? new InternalError();
}

/**
 * A file server's refusal: `@fastify/static` (under `/docs/static/`, `/ui/`) passes on the
 * `http-errors` error of `send` for a path outside its root or a malformed escape (403, 400, with
 * `expose: true`, which that library sets on client errors only). The path names nothing served:
 * a 404, never a 500 and its error line.
 */
function isFileRefusal(err: FastifyError | Error): boolean {
  const { statusCode, expose } = err as { statusCode?: unknown; expose?: unknown };
  return expose === true && typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500;
}

/**
 * The client closed the connection before its body arrived in full: the error Node's HTTP server
 * gives the request (`aborted`, code ECONNRESET). A reset of an outgoing connection (Redis, MongoDB)
 * has another message ("read ECONNRESET") and stays a 500.
 */
function isClientAbort(err: FastifyError | Error): boolean {
  return (err as FastifyError).code === 'ECONNRESET' && err.message === 'aborted';
}

/**
 * fastify `setErrorHandler` callback built on {@link toSchedulerError}.
 * @param storeFault the store's current fault as an error (null: none)
 */
export function errorHandler(bodyLimit: number, storeFault?: () => SchedulerError | null) {
  return (err: FastifyError, req: FastifyRequest, reply: FastifyReply): void => {
    const mapped = toSchedulerError(err, bodyLimit, req, storeFault);
    const status = httpStatusOf(mapped.code);
    // A 503 the service chose (shutting down, overloaded) is expected: not an error with a stack.
    if (status >= 500 && !(mapped.retryable && status === 503)) req.log.error({ err }, 'request failed');
    // A store fault is logged once by the store's health (docs/OPERATIONS.md "Store faults"), not
    // once per request it refuses: a helper's 15 s lock gave 437 of these lines at info.
    else if (mapped.code === 'STORE_UNAVAILABLE') req.log.debug({ err }, 'request refused: the store is unavailable');
    // The client's fault, and nobody is left to answer: not an error of the service.
    else if (isClientAbort(err)) req.log.info({ code: 'ECONNRESET' }, 'request aborted by the client before its body arrived');
    else if (status === 503) req.log.info({ code: mapped.code }, 'request refused: service unavailable');
    const retryAfter = mapped.details.retry_after_seconds;
    if (typeof retryAfter === 'number') reply.header('retry-after', String(Math.max(1, Math.ceil(retryAfter))));
    else if (mapped.retryable && status === 503) reply.header('retry-after', '1');
    if (status === 401) reply.header('www-authenticate', 'Bearer');
    void reply.status(status).send(mapped.toJSON());
  };
}
