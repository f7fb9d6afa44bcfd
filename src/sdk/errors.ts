/**
 * The errors the SDK throws: an answer of the API outside 2xx ({@link SchedulerApiError} and one
 * subclass per common status), a service that cannot be reached ({@link ConnectionError}) and a
 * wait that ran out of time ({@link WaitTimeoutError}). Stands alone: no import outside `src/sdk/`
 * but types.
 */
import type { ErrorCode } from '../contract/error-catalog';

/** A code of the API's error catalog (docs/API.md "Errors"), or another string from a newer server. */
export type ApiErrorCode = ErrorCode | (string & {});

/**
 * An answer outside 2xx, as the API describes it: `{error: {code, message, details}}`.
 * `field` is `details.field` (the request field a validation error names), when there is one.
 * `retryAfterMs` is the answer's `Retry-After` in ms (429 and 503), when it sent one.
 */
export class SchedulerApiError extends Error {
  /** The request field the error names (`details.field`), e.g. `scheduled_at` or `tasks[3].payload.url`. */
  readonly field: string | undefined;

  constructor(
    /** The HTTP status of the answer. */
    readonly status: number,
    /** The catalog's code (`HTTP_<status>` when the answer was not the API's error shape). */
    readonly code: ApiErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = new.target.name;
    this.field = typeof details.field === 'string' ? details.field : undefined;
  }
}

/** 400: the request is invalid (`VALIDATION_FAILED`, `UNKNOWN_TASK_TYPE`, `INVALID_WORKFLOW`, …); `field` names what. */
export class BadRequestError extends SchedulerApiError {}
/** 401: no API key or an unknown one. */
export class UnauthorizedError extends SchedulerApiError {}
/** 403: the key may not do this (an admin route, another tenant). */
export class ForbiddenError extends SchedulerApiError {}
/** 404: no such task, cron task, workflow or route. */
export class NotFoundError extends SchedulerApiError {}
/** 409: the state forbids it (`TASK_STATE_CONFLICT`, `IDEMPOTENCY_CONFLICT`, `ATTEMPT_CONFLICT`, …). */
export class ConflictError extends SchedulerApiError {}
/** 413: a body, payload, workflow or checkpoint over its size limit. */
export class PayloadTooLargeError extends SchedulerApiError {}
/** 429: the submission rate limit (`RATE_LIMITED`); retried by the client, thrown once retries are used up. */
export class RateLimitedError extends SchedulerApiError {}
/** 503: starting, draining, overloaded or the store is unavailable; retried by the client, thrown once retries are used up. */
export class UnavailableError extends SchedulerApiError {}

const BY_STATUS: Record<number, typeof SchedulerApiError> = {
  400: BadRequestError,
  401: UnauthorizedError,
  403: ForbiddenError,
  404: NotFoundError,
  409: ConflictError,
  413: PayloadTooLargeError,
  429: RateLimitedError,
  503: UnavailableError,
};

/**
 * The error of an answer outside 2xx: the subclass of its status (else {@link SchedulerApiError})
 * with the API's code, message and details; for a body that is not the API's error shape, code
 * `HTTP_<status>` and the body's text (or the status text) as message.
 */
export function apiErrorOf(status: number, statusText: string, body: unknown, retryAfterMs?: number): SchedulerApiError {
  const e = (body as { error?: { code?: unknown; message?: unknown; details?: unknown } } | null)?.error;
  const code = typeof e?.code === 'string' ? e.code : `HTTP_${status}`;
  const message = typeof e?.message === 'string' ? e.message : typeof body === 'string' && body ? body : statusText;
  const details = e?.details && typeof e.details === 'object' ? (e.details as Record<string, unknown>) : {};
  const Class = BY_STATUS[status] ?? SchedulerApiError;
  return new Class(status, code, message, details, retryAfterMs);
}

/** TLS errors of a server certificate the client does not trust (Node's codes). */
const UNTRUSTED_CERTIFICATE = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
]);

/**
 * The service could not be reached or did not answer: refused, DNS, reset, a certificate not
 * trusted, or no answer within the request's timeout (`code` `ETIMEDOUT`). `code` is Node's error
 * code when there is one.
 */
export class ConnectionError extends Error {
  readonly code: string | undefined;

  constructor(url: string, cause: unknown) {
    const code = (cause as { code?: string })?.code;
    const hint = code && UNTRUSTED_CERTIFICATE.has(code) ? ' (give the CA of its certificate with --ca-file or SCHEDULER_CA_FILE)' : '';
    super(`cannot reach the scheduler at ${url}: ${(cause as Error)?.message ?? String(cause)}${hint}`, { cause });
    this.name = 'ConnectionError';
    this.code = code;
  }
}

/** The client option a {@link ClientOptionError} names. */
export type ClientOption = 'url' | 'apiKey' | 'tls.ca' | 'tls.cert' | 'tls.key' | 'fetchTimeoutMs';

/**
 * A client option that cannot work, refused by `createClient` (and `createWorker`) before any call.
 * A `TypeError` whose message is `<option>: <reason>`; `option` and `reason` carry the two parts,
 * so a caller (the CLI) can name its own flag without reading the message.
 */
export class ClientOptionError extends TypeError {
  constructor(
    readonly option: ClientOption,
    readonly reason: string,
  ) {
    super(`${option}: ${reason}`);
    this.name = 'ClientOptionError';
  }
}

/**
 * A request body the client refuses before sending it: a number JSON cannot hold (NaN, ±Infinity:
 * it would be sent as null), or nesting deeper than {@link MAX_BODY_DEPTH} levels (deeper than
 * anything the service takes, and past what `JSON.stringify` can write). A `TypeError`; the
 * message names the path or the depth.
 */
export class RequestBodyError extends TypeError {
  constructor(message: string) {
    super(message);
    this.name = 'RequestBodyError';
  }
}

/**
 * Deepest nesting (objects and arrays) of a request body the client sends: the service takes
 * payloads, results, checkpoints and metadata of at most 64 levels, and a body wraps them in a few
 * more (a batch, a workflow's tasks).
 */
export const MAX_BODY_DEPTH = 100;

/**
 * A wait (`client.tasks.wait`, `client.workflows.wait`) that reached its timeout before the task or
 * workflow ended; `last` is the last view read (its current state).
 */
export class WaitTimeoutError<V = unknown> extends Error {
  constructor(
    readonly id: string,
    readonly timeoutMs: number,
    readonly last: V,
  ) {
    super(`${id} did not end within ${timeoutMs} ms (last status ${(last as { status?: string } | null)?.status ?? 'unknown'})`);
    this.name = 'WaitTimeoutError';
  }
}
