import { expect } from 'chai';
import {
  CronNeverFiresError,
  CronNotFoundError,
  ForbiddenError,
  OverloadedError,
  RateLimitedError,
  UnauthorizedError,
  AttemptConflictError,
  NotExternalTaskError,
  CheckpointTooLargeError,
  IdempotencyConflictError,
  InternalError,
  InvalidTransitionError,
  PayloadTooLargeError,
  SchedulerError,
  ServiceUnavailableError,
  TaskNotFoundError,
  TaskStateConflictError,
  UnknownTaskTypeError,
  ValidationError,
  InvalidWorkflowError,
  WorkflowTooLargeError,
  WorkflowNotFoundError,
  WorkflowStateConflictError,
  TaskInWorkflowError,
  StoreUnavailableError,
  StoreContendedError,
  TooManyWaitersError,
  NotPullQueueError,
} from '../../src/domain/errors';
import * as domainErrors from '../../src/domain/errors';
import { ERROR_CATALOG, ErrorCode, httpStatusOf, RemoteSchedulerError } from '../../src/contract/error-catalog';
import * as httpErrors from '../../src/api/http-errors';
import {
  DuplicateHeaderError,
  MalformedJsonError,
  MalformedRequestError,
  HttpsRequiredError,
  RequestTimeoutError,
  MethodNotAllowedError,
  RouteNotFoundError,
  UnsupportedMediaTypeError,
} from '../../src/api/http-errors';

/** One sample instance of every catalog class, keyed by the code it must carry. */
const SAMPLES: Record<ErrorCode, () => SchedulerError> = {
  VALIDATION_FAILED: () => new ValidationError('priority', 'must be one of high, medium, low'),
  MALFORMED_JSON: () => new MalformedJsonError('Unexpected end of JSON input'),
  MALFORMED_REQUEST: () => new MalformedRequestError(),
  HTTPS_REQUIRED: () => new HttpsRequiredError(),
  REQUEST_TIMEOUT: () => new RequestTimeoutError(30_000),
  UNKNOWN_TASK_TYPE: () => new UnknownTaskTypeError('task_type', 'nope', ['echo', 'noop']),
  PAYLOAD_TOO_LARGE: () => new PayloadTooLargeError(1024),
  UNSUPPORTED_MEDIA_TYPE: () => new UnsupportedMediaTypeError('text/plain'),
  TASK_NOT_FOUND: () => new TaskNotFoundError('t-1'),
  CRON_NOT_FOUND: () => new CronNotFoundError('c-1'),
  CRON_NEVER_FIRES: () => new CronNeverFiresError('0 0 30 2 *', 'day-of-month "30", month "2" and day-of-week "*"'),
  ROUTE_NOT_FOUND: () => new RouteNotFoundError('GET', '/nope'),
  METHOD_NOT_ALLOWED: () => new MethodNotAllowedError('PUT', '/api/v1/tasks', ['GET', 'HEAD', 'POST']),
  TASK_STATE_CONFLICT: () => new TaskStateConflictError('t-1', 'SUCCEEDED', 'cancel'),
  IDEMPOTENCY_CONFLICT: () => new IdempotencyConflictError('idempotency_key', 'order-42', 't-1'),
  INVALID_TRANSITION: () => new InvalidTransitionError('DEAD', 'claim'),
  SERVICE_UNAVAILABLE: () => new ServiceUnavailableError('shutting down'),
  INTERNAL_ERROR: () => new InternalError(),
  INVALID_WORKFLOW: () => new InvalidWorkflowError('tasks', 'cycle', 'the dependencies form a cycle: x → y → x', { cycle: ['x', 'y'] }),
  WORKFLOW_TOO_LARGE: () => new WorkflowTooLargeError(10_000, 10_001),
  WORKFLOW_NOT_FOUND: () => new WorkflowNotFoundError('w-1'),
  WORKFLOW_STATE_CONFLICT: () => new WorkflowStateConflictError('w-1', 'SUCCEEDED', 'cancel'),
  TASK_IN_WORKFLOW: () => new TaskInWorkflowError('t-1', 'w-1', 'delete from the dead-letter queue'),
  UNAUTHORIZED: () => new UnauthorizedError('missing Authorization: Bearer <key>'),
  FORBIDDEN: () => new ForbiddenError('PUT /api/v1/tenants/{id}'),
  RATE_LIMITED: () => new RateLimitedError('acme', 2, { rate_per_second: 10, burst: 10 }),
  OVERLOADED: () => new OverloadedError('global', { tenant_id: 'acme', priority: 'low', waiting: 80, cap: 100, retry_after_seconds: 5 }),
  ATTEMPT_CONFLICT: () => new AttemptConflictError('t-1', 1, 'RETRYING', 1),
  NOT_EXTERNAL_TASK: () => new NotExternalTaskError('t-1', 'default'),
  CHECKPOINT_TOO_LARGE: () => new CheckpointTooLargeError(65_536, 70_000),
  DUPLICATE_HEADER: () => new DuplicateHeaderError('authorization', 2),
  STORE_UNAVAILABLE: () => new StoreUnavailableError('disk_full', '/data/scheduler.db', 'SQLITE_FULL database or disk is full', true),
  STORE_CONTENDED: () => new StoreContendedError('40001: could not serialize access due to read/write dependencies among transactions', 6),
  TOO_MANY_WAITERS: () => new TooManyWaitersError(5000),
  NOT_PULL_QUEUE: () => new NotPullQueueError('emails', 'stream'),
};

const CODES = Object.keys(ERROR_CATALOG) as ErrorCode[];

describe('error catalog', () => {
  it('has a sample for every catalog code and no extra', () => {
    expect(Object.keys(SAMPLES)).to.have.members(CODES);
    expect(Object.keys(SAMPLES)).to.have.lengthOf(CODES.length);
  });

  it('every error class of domain/errors.ts and api/http-errors.ts has a sample, so its code has a status in the catalog', () => {
    const exported: unknown[] = [...Object.values(domainErrors), ...Object.values(httpErrors)];
    const classes = exported.filter(
      (v): v is { name: string; prototype: unknown } => typeof v === 'function' && v.prototype instanceof SchedulerError,
    );
    const sampled = new Set<unknown>(Object.values(SAMPLES).map((make) => make().constructor));
    expect(classes.length).to.be.greaterThan(20);
    for (const cls of classes) expect(sampled.has(cls), `${cls.name} has no sample`).to.equal(true);
    for (const code of CODES) expect(ERROR_CATALOG[code].status, code).to.be.within(400, 599);
  });

  for (const code of CODES) {
    describe(code, () => {
      it('instance code/status/retryable match the catalog', () => {
        const err = SAMPLES[code]();
        expect(err.code).to.equal(code);
        expect(httpStatusOf(err.code)).to.equal(ERROR_CATALOG[code].status);
        expect(err.retryable).to.equal(ERROR_CATALOG[code].retryable);
      });

      it('carries no HTTP status of its own (the catalog has it)', () => {
        expect(SAMPLES[code]()).not.to.have.property('status');
      });

      it('is an Error and a SchedulerError named after its class', () => {
        const err = SAMPLES[code]();
        expect(err).to.be.instanceOf(Error);
        expect(err).to.be.instanceOf(SchedulerError);
        expect(err.name).to.equal(err.constructor.name);
        expect(err.message).to.be.a('string').and.not.equal('');
      });

      it('toJSON is {error: {code, message, details}}', () => {
        const err = SAMPLES[code]();
        const json = err.toJSON();
        expect(json).to.have.all.keys('error');
        expect(json.error).to.have.all.keys('code', 'message', 'details');
        expect(json.error).to.deep.equal({ code, message: err.message, details: err.details });
        expect(JSON.parse(JSON.stringify(err))).to.deep.equal(json);
      });

      it('RemoteSchedulerError rebuilt from the body has the same code/status/retryable', () => {
        const original = SAMPLES[code]();
        const remote = new RemoteSchedulerError(original.toJSON().error);
        expect(remote).to.be.instanceOf(SchedulerError);
        expect(remote.code).to.equal(code);
        expect(remote.status).to.equal(httpStatusOf(original.code));
        expect(remote.retryable).to.equal(original.retryable);
        expect(remote.message).to.equal(original.message);
        expect(remote.details).to.deep.equal(original.details);
        expect(remote.toJSON()).to.deep.equal(original.toJSON());
      });
    });
  }

  describe('details of the specific classes', () => {
    it('ValidationError names the field and the reason, keeping extra details', () => {
      const err = new ValidationError('run_at', 'must be ISO 8601', { value: 'tomorrow' });
      expect(err.message).to.equal('run_at: must be ISO 8601');
      expect(err.details).to.deep.equal({ field: 'run_at', reason: 'must be ISO 8601', value: 'tomorrow' });
    });

    it('UnknownTaskTypeError lists the registered types and says how to register one', () => {
      const err = new UnknownTaskTypeError('task_type', 'nope', ['echo', 'noop']);
      expect(err.details).to.deep.equal({
        field: 'task_type',
        task_type: 'nope',
        registered_types: ['echo', 'noop'],
        config_key: 'handlers',
        docs: 'docs/API.md#task-types-and-handlers',
      });
      expect(err.message).to.include('nope').and.include('echo, noop');
      expect(err.message).to.include('{"handlers":{"nope":"./handlers/your-module.js"}}').and.include('SCHEDULER_CONFIG');
    });

    it('TaskStateConflictError carries the current state', () => {
      expect(new TaskStateConflictError('t-9', 'DEAD', 'cancel').details).to.deep.equal({
        task_id: 't-9',
        state: 'DEAD',
        operation: 'cancel',
      });
    });

    it('InternalError has a generic default message and empty details', () => {
      const err = new InternalError();
      expect(err.message).to.equal('internal error');
      expect(err.details).to.deep.equal({});
    });
  });

  describe('RemoteSchedulerError', () => {
    it('rebuilds status/retryable from the code alone', () => {
      const err = new RemoteSchedulerError({ code: 'SERVICE_UNAVAILABLE', message: 'x', details: {} });
      expect(err.status).to.equal(503);
      expect(err.retryable).to.equal(true);
      const nf = new RemoteSchedulerError({ code: 'TASK_NOT_FOUND', message: 'x', details: { task_id: 'a' } });
      expect(nf.status).to.equal(404);
      expect(nf.retryable).to.equal(false);
    });

    it('an unknown code becomes status 500, not retryable, keeping the code', () => {
      const err = new RemoteSchedulerError({ code: 'SOMETHING_NEW', message: 'hm', details: { a: 1 } });
      expect(err.code).to.equal('SOMETHING_NEW');
      expect(err.status).to.equal(500);
      expect(err.retryable).to.equal(false);
      expect(err.toJSON()).to.deep.equal({ error: { code: 'SOMETHING_NEW', message: 'hm', details: { a: 1 } } });
    });

    it('a code naming an Object.prototype member is treated as unknown', () => {
      for (const code of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
        const err = new RemoteSchedulerError({ code, message: 'm', details: {} });
        expect(err.status, code).to.equal(500);
        expect(err.retryable, code).to.equal(false);
      }
    });
  });
});
