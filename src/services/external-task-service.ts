import type { Config } from '../config';
import {
  externalCheckpointSchema,
  externalCompletionSchema,
  externalHeartbeatSchema,
  externalLogsSchema,
  externalProgressSchema,
} from '../contract/external-schemas';
import { iso } from '../contract/task-json';
import { NOT_A_DATE_TIME, parseIsoWithOffset } from '../contract/iso-date';
import type {
  ExternalCheckpointBody,
  ExternalCompletionBody,
  ExternalHeartbeatBody,
  ExternalLogsBody,
  ExternalProgressBody,
} from '../contract/types';
import { numberPostedLines } from '../domain/posted-log-lines';
import { checkpointText } from '../domain/checkpoint';
import { boundedMessage, boundedStack } from '../domain/attempt-error';
import { assertProgress } from '../domain/progress';
import { exceedsJsonDepth, MAX_JSON_DEPTH } from '../domain/json-depth';
import { SchemaValidator } from '../contract/validation';
import type { Clock } from '../domain/clock';
import {
  AttemptConflictError,
  CheckpointTooLargeError,
  InternalError,
  NotExternalTaskError,
  ServiceUnavailableError,
  StoreUnavailableError,
  TaskNotFoundError,
  ValidationError,
} from '../domain/errors';
import type { AttemptOutcome } from '../domain/retry-policy';
import type { TaskRecord, TaskState } from '../domain/task';
import type { Store } from '../storage/store';
import { storeUnavailable } from '../storage/store-health';
import { Caller, canAccess, OPEN_CALLER } from '../tenancy/caller';
import type { ExternalCompletionResult, ExternalGateway } from './ports';
import { ExternalQueueSpec, externalQueueSpecs } from '../domain/external-queues';

export interface ExternalTaskServiceDeps {
  store: Store;
  clock: Clock;
  config: Config;
  /** Null when no dispatcher runs (route tests without actors): completions answer 503. */
  gateway: ExternalGateway | null;
}

/** Answer of a completion: the state the attempt moved its task to. */
export interface CompletionAnswer {
  task_id: string;
  attempt: number;
  status: TaskState;
}

/** Answer of a heartbeat: the attempt's new lease expiry (ISO-8601 UTC). */
export interface HeartbeatAnswer {
  task_id: string;
  attempt: number;
  lease_expires_at: string;
}

/** Answer of a checkpoint: when it was stored and its size as JSON text (0: cleared). */
export interface CheckpointAnswer {
  task_id: string;
  attempt: number;
  saved_at: string;
  size_bytes: number;
}

/** Answer of posted log lines: how many were kept (lines past the attempt's bounds push its oldest out). */
export interface LogsAnswer {
  task_id: string;
  attempt: number;
  appended: number;
}

/** Answer of a progress report: when it was stored. */
export interface ProgressAnswer {
  task_id: string;
  attempt: number;
  progress_at: string;
}

/**
 * Reports of external consumers on attempts of external queues, for REST and the actor
 * messages: `complete` (success with a result, or an error, retryable unless permanent),
 * `heartbeat` (extend the attempt's lease), `checkpoint` (save where the next attempt resumes),
 * `progress`, and (REST) `logs` (lines kept with the attempt). Every report names its attempt: the attempt number is
 * the fencing token, so a report on an attempt that is not the task's current RUNNING attempt
 * (stale, duplicated, lease expired and retried, cancelled) is refused with 409
 * `ATTEMPT_CONFLICT` and changes nothing. Tenant keys see only their tenant's tasks (404 otherwise).
 * Each report is validated against its schema here, whatever its declared type: REST and the
 * actor messages hand it over unchecked.
 */
export class ExternalTaskService {
  private readonly validator = new SchemaValidator();
  private readonly specs: Map<string, ExternalQueueSpec>;
  /** The log write in progress per attempt (`id#attempt`): posts of one attempt are numbered one after the other. */
  private readonly logWrites = new Map<string, Promise<void>>();

  constructor(private readonly deps: ExternalTaskServiceDeps) {
    this.specs = externalQueueSpecs(deps.config);
  }

  /**
   * Completes an attempt through the same path as a worker's report: the retry policy decides
   * (result → SUCCEEDED; error → RETRYING with backoff while attempts remain, else DEAD; permanent
   * error → FAILED), written as a compare-and-set on (id, attempt, RUNNING). A result larger than
   * `maxResultBytes` ends the attempt as a permanent `result_too_large` failure, as for a handler.
   * @throws ValidationError (400, `details.field`); TaskNotFoundError (404); NotExternalTaskError
   *   (409); AttemptConflictError (409); ServiceUnavailableError (503) without a dispatcher;
   *   StoreUnavailableError (503, `Retry-After`) while the store has a fault (the completion is kept
   *   and written once it is back)
   */
  async complete(id: string, body: ExternalCompletionBody, caller: Caller = OPEN_CALLER): Promise<CompletionAnswer> {
    this.validator.assert(externalCompletionSchema, body);
    const b = body;
    if (b.error !== undefined && b.result !== undefined) {
      throw new ValidationError('error', 'cannot be given with result: an attempt either succeeded (result) or failed (error)');
    }
    if (b.result !== undefined && exceedsJsonDepth(b.result))
      throw new ValidationError('result', `nests deeper than ${MAX_JSON_DEPTH} levels`);
    const task = await this.runningAttempt(id, b.attempt, caller);
    if (!this.deps.gateway) throw new ServiceUnavailableError('the dispatcher is not running');
    // A cancel recorded in the store (on another node, whose message has not reached this one yet)
    // ends the attempt CANCELLED, as a heartbeat does: the report after the cancel's 202 is a 409.
    if (task.cancelRequested) return this.cancelledAtReport(id, b.attempt, task);
    let res: ExternalCompletionResult;
    try {
      res = await this.deps.gateway.complete({
        taskId: id,
        attempt: b.attempt,
        outcome: this.outcomeOf(b),
        retry: task.retry,
        startedAt: task.startedAt,
      });
    } catch (err) {
      // The store away (a disk full, a deleted file, a lost server): 503 with Retry-After, as
      // every other report answers; the completion is kept and written once the store is back.
      if (err instanceof StoreUnavailableError) throw err;
      const fault = this.deps.store.health.fault;
      if (fault) throw storeUnavailable(fault);
      throw new InternalError('the completion could not be recorded; report it again');
    }
    if (!res.applied || res.state === null) throw await this.conflict(id, b.attempt);
    return { task_id: id, attempt: b.attempt, status: res.state };
  }

  /**
   * Extends the lease of a running attempt to now + the queue's `leaseMs` (compare-and-set on id,
   * attempt, RUNNING), so a consumer with long work is not retried under it.
   * @throws ValidationError (400); TaskNotFoundError (404); NotExternalTaskError (409);
   *   AttemptConflictError (409)
   */
  async heartbeat(id: string, body: ExternalHeartbeatBody, caller: Caller = OPEN_CALLER): Promise<HeartbeatAnswer> {
    this.validator.assert(externalHeartbeatSchema, body);
    const { attempt } = body;
    const task = await this.runningAttempt(id, attempt, caller);
    // A cancel recorded in the store (on another node, or whose message was lost) ends the attempt
    // here, so its worker learns of it by this heartbeat's 409 whichever node it reports to.
    if (task.cancelRequested && this.deps.gateway) return this.cancelledAtReport(id, attempt, task);
    const until = this.deps.clock.now() + (this.specs.get(task.queue) as ExternalQueueSpec).leaseMs;
    const extended = await this.deps.store.extendLeases([{ taskId: id, attempt }], until);
    if (extended === 0) throw await this.conflict(id, attempt);
    return { task_id: id, attempt, lease_expires_at: new Date(until).toISOString() };
  }

  /**
   * Saves the attempt's checkpoint (compare-and-set on id, attempt, RUNNING; durable when this
   * answers). The task's next attempt gets it in its stream entry (`checkpoint` field).
   * @throws ValidationError (400); CheckpointTooLargeError (413, `details.field` value, over
   *   64 KiB of JSON); TaskNotFoundError (404); NotExternalTaskError (409); AttemptConflictError (409)
   */
  async checkpoint(id: string, body: ExternalCheckpointBody, caller: Caller = OPEN_CALLER): Promise<CheckpointAnswer> {
    this.validator.assert(externalCheckpointSchema, body);
    const { attempt, value } = body;
    if (exceedsJsonDepth(value)) throw new ValidationError('value', `nests deeper than ${MAX_JSON_DEPTH} levels`);
    try {
      checkpointText(value);
    } catch (err) {
      if (err instanceof CheckpointTooLargeError)
        throw new CheckpointTooLargeError(err.details.limit_bytes as number, err.details.actual_bytes as number, 'value');
      throw err;
    }
    await this.runningAttempt(id, attempt, caller);
    const res = await this.deps.store.saveCheckpoint(id, attempt, value, this.deps.clock.now());
    if (res.kind === 'not_found') throw new TaskNotFoundError(id);
    if (res.kind === 'conflict') throw new AttemptConflictError(id, attempt, res.state, res.attempt);
    return { task_id: id, attempt, saved_at: iso(res.savedAt), size_bytes: res.bytes };
  }

  /**
   * Records the attempt's progress (compare-and-set on id, attempt, RUNNING), shown by GET.
   * @throws ValidationError (400, `progress`); TaskNotFoundError (404); NotExternalTaskError (409);
   *   AttemptConflictError (409)
   */
  async progress(id: string, body: ExternalProgressBody, caller: Caller = OPEN_CALLER): Promise<ProgressAnswer> {
    this.validator.assert(externalProgressSchema, body);
    const { attempt, progress } = body;
    const value = assertProgress(progress);
    await this.runningAttempt(id, attempt, caller);
    const now = this.deps.clock.now();
    if ((await this.deps.store.reportProgress([{ taskId: id, attempt, value }], now)) === 0) throw await this.conflict(id, attempt);
    return { task_id: id, attempt, progress_at: iso(now) };
  }

  /**
   * Appends log lines to the attempt's log (`GET /api/v1/tasks/{id}/attempts/{n}/logs`), numbered
   * after those it has, with the bounds of `ctx.log`; each line's `level` is kept among its
   * fields. Only while the attempt runs (checked before the write). Lines of one attempt should
   * be posted one request at a time (requests of one attempt on one node are applied in order).
   * @throws ValidationError (400, `lines[i].at`, `lines[i].fields` nested deeper than 64 levels …);
   *   TaskNotFoundError (404); NotExternalTaskError
   *   (409); AttemptConflictError (409)
   */
  async logs(id: string, body: ExternalLogsBody, caller: Caller = OPEN_CALLER): Promise<LogsAnswer> {
    this.validator.assert(externalLogsSchema, body);
    const now = this.deps.clock.now();
    const posted = body.lines.map((l, i) => {
      const at = l.at === undefined ? now : parseIsoWithOffset(l.at);
      if (at === null) throw new ValidationError(`lines[${i}].at`, NOT_A_DATE_TIME);
      // As payloads and results: a reader's JSON parser may recurse (the dashboard, a client).
      if (l.fields !== undefined && exceedsJsonDepth(l.fields))
        throw new ValidationError(`lines[${i}].fields`, `nests deeper than ${MAX_JSON_DEPTH} levels`);
      // The line's level wins over a `level` of its own fields (API.md: kept as `fields.level`).
      return { at, message: l.msg, fields: { ...(l.fields ?? {}), level: l.level } };
    });
    await this.runningAttempt(id, body.attempt, caller);
    const key = `${id}#${body.attempt}`;
    const previous = this.logWrites.get(key) ?? Promise.resolve();
    const write = previous.then(async () => {
      const { store } = this.deps;
      const kept = await store.getAttemptLog(id, body.attempt);
      const { lines, keepFrom } = numberPostedLines(kept.lines, posted);
      await store.appendAttemptLogs([{ taskId: id, attempt: body.attempt, lines, keepFrom }], this.deps.clock.now());
      return lines.length;
    });
    const settled = write.then(
      () => undefined,
      () => undefined,
    );
    this.logWrites.set(key, settled);
    void settled.then(() => {
      if (this.logWrites.get(key) === settled) this.logWrites.delete(key);
    });
    return { task_id: id, attempt: body.attempt, appended: await write };
  }

  /**
   * A report (heartbeat, completion) for an attempt whose task has a cancel recorded: the attempt
   * ends CANCELLED here, whichever node the cancel came to, and the report is refused.
   * @throws AttemptConflictError (409) always, once the cancel is recorded (or TaskNotFoundError)
   */
  private async cancelledAtReport(id: string, attempt: number, task: TaskRecord): Promise<never> {
    await this.deps.gateway
      ?.complete({ taskId: id, attempt, outcome: { kind: 'cancelled' }, retry: task.retry, startedAt: task.startedAt })
      .catch(() => undefined);
    throw await this.conflict(id, attempt);
  }

  /** The task, checked: visible to the caller, of an external queue, running this attempt. */
  private async runningAttempt(id: string, attempt: number, caller: Caller): Promise<TaskRecord> {
    const task = await this.deps.store.getTask(id);
    if (!task || !canAccess(caller, task.tenantId)) throw new TaskNotFoundError(id);
    if (!this.specs.has(task.queue)) throw new NotExternalTaskError(id, task.queue);
    if (task.state !== 'RUNNING' || task.attempts !== attempt) throw new AttemptConflictError(id, attempt, task.state, task.attempts);
    return task;
  }

  private async conflict(id: string, attempt: number): Promise<Error> {
    const task = await this.deps.store.getTask(id);
    return task ? new AttemptConflictError(id, attempt, task.state, task.attempts) : new TaskNotFoundError(id);
  }

  private outcomeOf(b: ExternalCompletionBody): AttemptOutcome {
    if (b.error) {
      const { code, stack } = b.error;
      return {
        kind: 'failed',
        message: boundedMessage(b.error.message),
        errorType: b.error.type ?? 'ExternalError',
        permanent: b.error.permanent === true,
        // As a host handler's error keeps them (the same bounds on the stack; an empty one is none).
        ...(code !== undefined || stack
          ? { detail: { ...(code !== undefined ? { code } : {}), ...(stack ? { stack: boundedStack(stack) } : {}) } }
          : {}),
      };
    }
    const text = JSON.stringify(b.result ?? null);
    const bytes = Buffer.byteLength(text, 'utf8');
    const max = this.deps.config.maxResultBytes;
    if (bytes > max) {
      return {
        kind: 'failed',
        message: `result is ${bytes} bytes of JSON, more than the ${max} bytes allowed (maxResultBytes)`,
        errorType: 'result_too_large',
        permanent: true,
      };
    }
    return { kind: 'succeeded', result: b.result ?? null };
  }
}
