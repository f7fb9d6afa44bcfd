/**
 * The typed client of the scheduler's REST API, for any Node application
 * (`import { createClient } from 'actor-task-scheduler/client'`; docs/CLIENT.md):
 *
 *   const client = createClient({ url: 'http://127.0.0.1:8080', apiKey: process.env.SCHEDULER_API_KEY });
 *   const { task_id } = await client.tasks.submit({ task_type: 'email', payload: { to: 'a@example.com' } });
 *   const task = await client.tasks.wait(task_id, { timeoutMs: 60_000 });
 *
 * Request and answer types come from the API's JSON Schemas (src/contract/, type-only: importing
 * the client loads none of the server). Answers 429 and 503 are retried after their `Retry-After`;
 * other answers outside 2xx reject with a SchedulerApiError subclass carrying the API's code and field.
 */
import { ApiClient, ClientOptions } from '../transport';
import { audit, ConcurrencyLimitsApi, RateLimitsApi, TenantsApi } from './admin';
import { CronsApi } from './crons';
import { DeadLettersApi } from './dead-letters';
import { HealthApi } from './health';
import { QueuesApi, ReportsApi } from './reports';
import { TasksApi } from './tasks';
import type { AuditView } from './types';
import { WorkflowsApi } from './workflows';

export type { ClientOptions, RetryOptions, TlsFiles } from '../transport';
export type { ApiErrorCode, ClientOption } from '../errors';
export {
  BadRequestError,
  ClientOptionError,
  ConflictError,
  ConnectionError,
  ForbiddenError,
  NotFoundError,
  PayloadTooLargeError,
  RateLimitedError,
  RequestBodyError,
  SchedulerApiError,
  UnauthorizedError,
  UnavailableError,
  WaitTimeoutError,
  MAX_BODY_DEPTH,
} from '../errors';
export type * from './types';
export { TERMINAL_TASK_STATUSES, TERMINAL_WORKFLOW_STATUSES, MAX_WAIT_SECONDS } from './wait';
export {
  TasksApi,
  CronsApi,
  WorkflowsApi,
  DeadLettersApi,
  TenantsApi,
  RateLimitsApi,
  ConcurrencyLimitsApi,
  ReportsApi,
  QueuesApi,
  HealthApi,
};

/** The whole REST API, grouped by resource. */
export interface SchedulerClient {
  tasks: TasksApi;
  crons: CronsApi;
  workflows: WorkflowsApi;
  deadLetters: DeadLettersApi;
  tenants: TenantsApi;
  rateLimits: RateLimitsApi;
  concurrencyLimits: ConcurrencyLimitsApi;
  /** External workers' reports on their attempts (complete, heartbeat, checkpoint, progress). */
  reports: ReportsApi;
  queues: QueuesApi;
  health: HealthApi;
  /** `GET /api/v1/audit` (admin key): an audit pass now. */
  audit(): Promise<AuditView>;
  /** The JSON transport underneath, for a route this client does not name yet. */
  transport: ApiClient;
}

/**
 * A client of the service at `options.url` (`http:` or `https:`; `tls` gives a CA and a client
 * certificate), or of the first of several (cluster members), turning to the next after a
 * connection error or a 503 (`ClientOptions.url`). `retry.maxAttempts` (default 3) and `retry.maxDelayMs` (default 30,000) bound the
 * retries of 429/503 answers and of connection errors (GET/HEAD, idempotent requests);
 * `fetchTimeoutMs` (default 30,000) bounds each answer. No connection is made until a call.
 * A 2xx answer that is not JSON rejects with a SchedulerApiError of code `NOT_JSON`, one that is
 * JSON but not an object (`null`, a number) with `UNEXPECTED_ANSWER` (the URL names another
 * server). @throws TypeError when `url` is not an http:// or https:// URL, or has white space at
 * its ends, a query, a fragment or credentials (or a list with one such, an empty list, or one naming a member
 * twice), when `apiKey`
 * holds what a header cannot carry (white space at its ends, a control or non-ASCII character;
 * the message starts with `apiKey:`), or (an https URL) a `tls` file is
 * wrong (a CA without a certificate, a certificate without its key or not matching it; the message
 * starts with `tls.ca:`, `tls.cert:` or `tls.key:`)
 */
export function createClient(options: ClientOptions): SchedulerClient {
  const transport = new ApiClient(options);
  return {
    tasks: new TasksApi(transport),
    crons: new CronsApi(transport),
    workflows: new WorkflowsApi(transport),
    deadLetters: new DeadLettersApi(transport),
    tenants: new TenantsApi(transport),
    rateLimits: new RateLimitsApi(transport),
    concurrencyLimits: new ConcurrencyLimitsApi(transport),
    reports: new ReportsApi(transport),
    queues: new QueuesApi(transport),
    health: new HealthApi(transport),
    audit: () => audit(transport),
    transport,
  };
}
