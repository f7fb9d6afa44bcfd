import type { TaskSubmissionBody } from '../contract/types';
import type { Config } from '../config';
import { requestHash } from '../contract/canonical-json';
import { NOT_A_DATE_TIME, parseIsoWithOffset } from '../contract/iso-date';
import { assertJsonSize } from '../contract/json-size';
import { metadataJson } from '../contract/task-json';
import { UnknownTaskTypeError, ValidationError } from '../domain/errors';
import type { PayloadChecks } from '../handlers/payload-schemas';
import { newTask, NewTaskFields, taskFields } from '../domain/new-task';
import { NewTask } from '../domain/task';

/** A schema-valid submission body: its type is derived from the JSON Schema that validated it. */
export type Submission = TaskSubmissionBody;

/** What a submission carries besides its body (REST: headers). */
export interface SubmitOptions {
  /** W3C `traceparent` of the submitter (checked by `checkTraceparent`; malformed → 400). */
  traceparent?: string | null;
}

/**
 * Turns a schema-valid submission into a {@link NewTask}: the checks JSON Schema cannot express
 * (registered task type unless its queue is external, a date that exists, nesting depth, a
 * built-in type's payload), every default from config, a UUID v7
 * id, its partition, and for an idempotency key the request hash and how long the key is held.
 * @param path prefix of field names in errors (`tasks[3].` in a batch)
 * @param now submission time (epoch ms)
 * @param payloads the payload checks (built-ins' and handler modules' schemas; none: not checked, e.g. a cron instance
 *   built from a template checked when the cron was created)
 * @throws UnknownTaskTypeError | ValidationError (400); PayloadTooLargeError (413) for a payload
 *   whose JSON is larger than `maxPayloadBytes`, or metadata larger than `maxMetadataBytes` (UTF-8
 *   bytes, as stored and read back: contract/task-json.ts `metadataJson`)
 */
export function buildNewTask(
  s: Submission,
  path: string,
  now: number,
  config: Config,
  taskTypes: ReadonlySet<string>,
  payloads?: PayloadChecks,
): NewTask & { state: 'SCHEDULED' | 'PENDING' } {
  const d = config.defaults;
  // Tasks of an external queue run in external consumers: their types need no handler here.
  const external = Object.prototype.hasOwnProperty.call(config.externalQueues ?? {}, s.queue ?? d.queue);
  if (!external && !taskTypes.has(s.task_type)) {
    throw new UnknownTaskTypeError(`${path}task_type`, s.task_type, [...taskTypes].sort(), Object.keys(config.externalQueues ?? {}).sort());
  }
  let scheduledAt: number | null = null;
  if (s.scheduled_at !== undefined && s.scheduled_at !== null) {
    scheduledAt = parseIsoWithOffset(s.scheduled_at);
    if (scheduledAt === null) throw new ValidationError(`${path}scheduled_at`, NOT_A_DATE_TIME);
  }
  assertJsonSize(s.payload, config.maxPayloadBytes, `${path}payload`);
  const fields = taskFields(s, scheduledAt, config.defaults);
  assertJsonSize(metadataJson(fields), config.maxMetadataBytes, `${path}metadata`);
  if (!external) payloads?.assert(s.task_type, s.payload, `${path}payload`);
  const key = s.idempotency_key ?? null;
  const idempotency = key === null ? null : { key, requestHash: requestHashOf(fields), expiresAt: now + config.idempotencyRetentionMs };
  return newTask(fields, { now, partitions: config.partitions, idempotency });
}

/**
 * The hash an idempotency key is held with: of the request with every default applied and the
 * tenant and time resolved, so a repeat that spells out a default (`"priority": "medium"`), orders
 * fields differently or writes the same instant with another offset is the same request.
 */
function requestHashOf(f: NewTaskFields): string {
  const { tenant_id: _tenant, correlation_id: _correlation, ...metadata } = f.metadata as Record<string, unknown>;
  return requestHash({ ...f, metadata });
}
