import Fastify, { FastifyBaseLogger, FastifyInstance, FastifyReply, LogController } from 'fastify';
import sjson from 'secure-json-parse';
import type { Logger } from 'pino';
import { isUtf8 } from 'node:buffer';
import { clipEcho, ValidationError } from '../domain/errors';
import {
  MalformedJsonError,
  MalformedRequestError,
  RequestTimeoutError,
  MethodNotAllowedError,
  RouteNotFoundError,
  UnsupportedMediaTypeError,
} from './http-errors';
import type { SchedulerMetrics } from '../observability/metrics';
import { nonFiniteNumberPath } from '../contract/json-numbers';
import { httpStatusOf } from '../contract/error-catalog';
import type { TaskService } from '../services/task-service';
import type { OperationsService } from '../services/operations-service';
import { errorHandler } from './error-handler';
import { RouteMethods } from './route-methods';
import { healthRoutes } from './routes/health';
import { taskRoutes } from './routes/tasks';
import { deadLetterRoutes } from './routes/dead-letter';
import { auditRoutes } from './routes/audit';
import { cronRoutes } from './routes/cron-tasks';
import { tenantRoutes } from './routes/tenants';
import { concurrencyLimitRoutes } from './routes/concurrency-limits';
import { registerAuth } from './auth';
import { refuseDuplicateHeaders } from './duplicate-headers';
import { refuseUndecodableQuery } from './undecodable-query';
import { socketAnswer } from './socket-answer';
import { answerPlainHttpOnTls } from './plain-http-on-tls';
import type { Server as TlsServer } from 'node:tls';
import type { TenantAdmin } from '../services/tenant-admin';
import type { ApiKeys } from '../tenancy/api-keys';
import type { CronService } from '../services/cron-service';
import { workflowRoutes } from './routes/workflows';
import type { WorkflowService } from '../services/workflow-service';
import { registerOpenApi } from './openapi/register';
import { registerUi } from './ui';
import { refuseQueryWithoutSchema } from './no-query';
import { packageVersion } from '../version';
import { externalTaskRoutes } from './routes/external-tasks';
import type { HttpsOptions } from './tls';
import type { ExternalTaskService } from '../services/external-task-service';
import type { ResultWaiters } from '../services/result-waiters';
import type { PullLeaseService } from '../services/pull-lease-service';

/** Longest path parameter routed (characters); the id schemas allow up to the same length. */
const MAX_PARAM_LENGTH = 1000;

/** How long a request may take to arrive in full (ms) unless `AppDeps.requestTimeoutMs` says otherwise. */
const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

export interface AppDeps {
  service: TaskService;
  /** Readiness and the audit pass. */
  operations: OperationsService;
  crons: CronService;
  metrics: SchedulerMetrics;
  /** Largest accepted request body in bytes (→ 413 above). */
  bodyLimitBytes: number;
  batchMaxTasks: number;
  /** pino logger; omit for a silent app (tests). */
  logger?: Logger;
  /** Workflow operations; their routes are served when given. */
  workflows?: WorkflowService;
  /** Largest `POST /api/v1/workflows` body in bytes (default: `bodyLimitBytes`). */
  workflowBodyLimitBytes?: number;
  /** Tenant and rate-limit admin; its routes are served when given. */
  tenants?: TenantAdmin;
  /** API keys; none (or empty): the API is open and every caller is an admin. */
  apiKeys?: ApiKeys;
  /** External consumers' reports (complete, heartbeat); their routes are served when given. */
  external?: ExternalTaskService;
  /**
   * Largest `POST /api/v1/tasks/{id}/complete` body in bytes (default: `bodyLimitBytes`): room for a
   * result over `maxResultBytes`, so that it ends the attempt `result_too_large` instead of a 413
   * that leaves the attempt running.
   */
  completeBodyLimitBytes?: number;
  /** HTTP pull workers' lease requests; the route is served when given (with `external`). */
  pull?: PullLeaseService;
  /** A request not received in full within this many ms is answered 408 and closed (default 30,000). */
  requestTimeoutMs?: number;
  /** Serve HTTPS with these (tls.ts: the config's certificate and key, read and checked); absent or null: HTTP. */
  https?: HttpsOptions | null;
  /** The `?wait=` long polls: answered (current state) when the app closes, so a close is never held up by them. */
  waiters?: ResultWaiters;
}

/**
 * Builds the fastify app without listening (fastify's testing guide: `build()` apart from
 * `listen()`; tests call `app.inject()`). JSON bodies are parsed with prototype-poisoning
 * protection; an empty JSON body counts as no body; validation neither coerces types nor drops
 * unknown fields, so REST and actor messages accept exactly the same input.
 */
export function buildApp(deps: AppDeps): FastifyInstance {
  const requestTimeout = deps.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  // A client that stops sending (headers or body) is answered 408 and cut off after
  // `requestTimeout`. Node checks the deadlines only while `headersTimeout` ≤ `requestTimeout`
  // (its default of 60 s stayed above fastify's requestTimeout, set after the server was made,
  // so nothing was cut off: a stalled body was answered after 77 s in a trial), and every
  // `connectionsCheckingInterval` (30 s by default): here a tenth of the timeout, at most 2 s.
  const deadlines = {
    headersTimeout: requestTimeout,
    connectionsCheckingInterval: Math.min(2_000, Math.max(10, Math.floor(requestTimeout / 10))),
  };
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger | undefined,
    bodyLimit: deps.bodyLimitBytes,
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: false } },
    // Per-request log lines would dominate the log at thousands of submissions a second.
    logController: new LogController({ disableRequestLogging: true }),
    // Long ids reach the route (and get 404), instead of fastify's bare 414.
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    requestTimeout,
    http: deadlines,
    // With a certificate, fastify makes an HTTPS server from these options alone (not `http`'s):
    // the same deadlines go with them. (Typed apart: fastify's types tie `https` to another server type.)
    // A TLS handshake gets the request's deadline too (Node's default is 120 s), so a client that
    // opens a connection and never finishes its hello does not hold it for two minutes.
    ...((deps.https ? { https: { ...deps.https, ...deadlines, handshakeTimeout: requestTimeout } } : {}) as object),
    // URL errors found before routing get the same error envelope as everything else.
    frameworkErrors: (error, _req, reply) => {
      const err = new ValidationError('url', frameworkReason(error));
      void (reply as unknown as FastifyReply).status(httpStatusOf(err.code)).send(err.toJSON());
    },
    // Unparseable HTTP (bad method, bad header line) never reaches fastify: answer on the socket.
    clientErrorHandler: (error, socket) => {
      if (!socket.writable) return socket.destroy();
      const code = (error as { code?: string }).code;
      const status = code === 'HPE_HEADER_OVERFLOW' ? 431 : code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
      const err = status === 408 ? new RequestTimeoutError(requestTimeout) : new MalformedRequestError();
      socket.end(socketAnswer(status, err));
    },
  });
  if (deps.https) answerPlainHttpOnTls(app.server as unknown as TlsServer);
  // Only JSON is accepted (415 otherwise), uncompressed, only as UTF-8, and only valid UTF-8; a
  // number a double cannot hold is refused (contract/json-numbers.ts), never stored as null.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (req, body, done) => {
    const encoding = String(req.headers['content-encoding'] ?? '')
      .trim()
      .toLowerCase();
    if (encoding !== '' && encoding !== 'identity') {
      return done(new UnsupportedMediaTypeError(String(req.headers['content-type']), encoding), undefined);
    }
    const charset = /charset=([^;\s]+)/i.exec(String(req.headers['content-type'] ?? ''))?.[1]?.replace(/"/g, '');
    if (charset && !/^utf-?8$/i.test(charset)) {
      return done(new UnsupportedMediaTypeError(String(req.headers['content-type'])), undefined);
    }
    const buf = body as Buffer;
    if (!isUtf8(buf)) return done(new MalformedJsonError('the body is not valid UTF-8'), undefined);
    const text = buf.toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    try {
      const parsed: unknown = sjson.parse(text);
      const overflow = nonFiniteNumberPath(text, parsed);
      if (overflow !== null) {
        return done(
          new ValidationError(overflow, 'is a number beyond the range of a double (about ±1.8e308): it would be stored as null'),
          undefined,
        );
      }
      done(null, parsed);
    } catch (err) {
      const message = (err as Error).message;
      if (/prototype property/i.test(message)) {
        return done(
          new ValidationError('body', 'keys named "__proto__" (or "constructor" holding "prototype") are not accepted'),
          undefined,
        );
      }
      done(new MalformedJsonError(message), undefined);
    }
  });
  // Response schemas describe the answers in /openapi.json; they must not filter them (fastify's
  // default serializer would drop every field a schema does not list).
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  app.setErrorHandler(errorHandler(deps.bodyLimitBytes, () => deps.operations.storeFaultError()));
  // Long polls answer before the server waits for requests in flight (a wait may last 60 s).
  const waiters = deps.waiters;
  if (waiters) app.addHook('preClose', async () => waiters.close());
  // Every route registered from here on, for 405 answers (route-methods.ts).
  const routes = new RouteMethods();
  routes.watch(app);
  // Before authentication, on every path: a request with two copies of a singleton header, or a
  // query string that cannot be percent-decoded (as a path that cannot be: `frameworkErrors`).
  app.addHook('onRequest', refuseDuplicateHeaders);
  app.addHook('onRequest', refuseUndecodableQuery);
  registerAuth(app, deps.apiKeys);
  registerOpenApi(app, { authRequired: deps.apiKeys?.enabled ?? false, version: packageVersion() });
  registerUi(app);
  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0];
    // A route of this very method that answers "not found" itself (a missing file under /ui/) is a 404.
    const allowed = routes.allowed(path);
    if (allowed.length > 0 && !allowed.includes(req.method)) {
      const err = new MethodNotAllowedError(req.method, path, allowed);
      void reply.status(httpStatusOf(err.code)).header('allow', allowed.join(', ')).send(err.toJSON());
      return;
    }
    const err = new RouteNotFoundError(req.method, path);
    void reply.status(httpStatusOf(err.code)).send(err.toJSON());
  });
  // Registered after the OpenAPI plugin so that its onRoute hook sees every route.
  void app.register(async (api) => {
    api.addHook('onRoute', refuseQueryWithoutSchema);
    taskRoutes(api, deps.service, deps.batchMaxTasks);
    if (deps.external) externalTaskRoutes(api, deps.external, deps.pull, deps.completeBodyLimitBytes ?? deps.bodyLimitBytes);
    deadLetterRoutes(api, deps.service);
    cronRoutes(api, deps.crons);
    if (deps.tenants) tenantRoutes(api, deps.tenants);
    if (deps.tenants) concurrencyLimitRoutes(api, deps.tenants.concurrency);
    auditRoutes(api, deps.operations);
    healthRoutes(api, deps.operations, deps.metrics);
    if (deps.workflows) workflowRoutes(api, deps.workflows, deps.workflowBodyLimitBytes ?? deps.bodyLimitBytes);
  });
  return app;
}

/**
 * The reason given for a URL that fastify refused before routing (FST_ERR_BAD_URL,
 * FST_ERR_MAX_PARAM_LENGTH). Its own message quotes the whole URL, which for an over-long id is
 * kilobytes and was repeated in `message` and `details.reason`; this one quotes at most
 * `ECHO_MAX` (domain/errors) characters of it.
 */
function frameworkReason(error: { code?: string; message: string }): string {
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') return `a path parameter is longer than ${MAX_PARAM_LENGTH} characters`;
  return clipEcho(error.message);
}
