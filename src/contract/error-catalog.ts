import { SchedulerError } from '../domain/errors';

/**
 * Every error code with the HTTP status the REST API answers it with and whether the same request
 * may succeed later: the one code → status table (the error classes carry no status; the REST API's
 * error handler and {@link RemoteSchedulerError} read it through {@link httpStatusOf}). docs/API.md
 * lists the same rows (checked by test/unit/errors-catalog-docs.test.ts).
 */
export const ERROR_CATALOG = {
  VALIDATION_FAILED: { status: 400, retryable: false },
  MALFORMED_JSON: { status: 400, retryable: false },
  MALFORMED_REQUEST: { status: 400, retryable: false },
  HTTPS_REQUIRED: { status: 400, retryable: false },
  REQUEST_TIMEOUT: { status: 408, retryable: true },
  UNKNOWN_TASK_TYPE: { status: 400, retryable: false },
  PAYLOAD_TOO_LARGE: { status: 413, retryable: false },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, retryable: false },
  TASK_NOT_FOUND: { status: 404, retryable: false },
  CRON_NOT_FOUND: { status: 404, retryable: false },
  CRON_NEVER_FIRES: { status: 400, retryable: false },
  ROUTE_NOT_FOUND: { status: 404, retryable: false },
  METHOD_NOT_ALLOWED: { status: 405, retryable: false },
  TASK_STATE_CONFLICT: { status: 409, retryable: false },
  IDEMPOTENCY_CONFLICT: { status: 409, retryable: false },
  INVALID_TRANSITION: { status: 409, retryable: false },
  SERVICE_UNAVAILABLE: { status: 503, retryable: true },
  INTERNAL_ERROR: { status: 500, retryable: true },
  INVALID_WORKFLOW: { status: 400, retryable: false },
  WORKFLOW_TOO_LARGE: { status: 413, retryable: false },
  WORKFLOW_NOT_FOUND: { status: 404, retryable: false },
  WORKFLOW_STATE_CONFLICT: { status: 409, retryable: false },
  TASK_IN_WORKFLOW: { status: 409, retryable: false },
  UNAUTHORIZED: { status: 401, retryable: false },
  FORBIDDEN: { status: 403, retryable: false },
  RATE_LIMITED: { status: 429, retryable: true },
  OVERLOADED: { status: 503, retryable: true },
  ATTEMPT_CONFLICT: { status: 409, retryable: false },
  NOT_EXTERNAL_TASK: { status: 409, retryable: false },
  CHECKPOINT_TOO_LARGE: { status: 413, retryable: false },
  DUPLICATE_HEADER: { status: 400, retryable: false },
  STORE_UNAVAILABLE: { status: 503, retryable: true },
  STORE_CONTENDED: { status: 503, retryable: true },
  TOO_MANY_WAITERS: { status: 429, retryable: true },
  NOT_PULL_QUEUE: { status: 404, retryable: false },
} as const;

export type ErrorCode = keyof typeof ERROR_CATALOG;

/** The catalog's row of `code`; undefined for a code it lacks (own keys only: `constructor` is no code). */
export function catalogEntryOf(code: string): (typeof ERROR_CATALOG)[ErrorCode] | undefined {
  return Object.hasOwn(ERROR_CATALOG, code) ? ERROR_CATALOG[code as ErrorCode] : undefined;
}

/** The HTTP status of an error `code`: the catalog's, 500 for a code it lacks. */
export function httpStatusOf(code: string): number {
  return catalogEntryOf(code)?.status ?? 500;
}

/** Error body as it crosses a process or actor boundary. */
export interface ErrorBody {
  code: string;
  message: string;
  details: Record<string, unknown>;
}

/**
 * An error rebuilt on the caller's side from an {@link ErrorBody} (actor-message client), with the
 * HTTP status the REST API would have answered (`status`, from the catalog; 500 and not retryable
 * for a code the catalog lacks), so a caller of either API can branch on the same number.
 */
export class RemoteSchedulerError extends SchedulerError {
  readonly code: string;
  readonly status: number;
  override readonly retryable: boolean;
  constructor(body: ErrorBody) {
    super(body.message, body.details);
    this.code = body.code;
    this.status = httpStatusOf(body.code);
    this.retryable = catalogEntryOf(body.code)?.retryable ?? false;
  }
}
