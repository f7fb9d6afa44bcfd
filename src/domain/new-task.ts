import type { TaskTemplate } from './cron/cron-definition';
import { partitionOf } from './partition';
import type { NewTask, Priority, RetryBackoff } from './task';
import { uuidv7 } from './task-id';

/** The defaults a task takes for every field its submission leaves out (config `defaults`). */
export interface TaskDefaults {
  priority: Priority;
  maxRetries: number;
  retryBackoff: RetryBackoff;
  retryDelaySeconds: number;
  maxRetryDelaySeconds: number;
  timeoutSeconds: number;
  queue: string;
  tenantId: string;
}

/** The fields of a new task that come from its template and the defaults (what an idempotency key's request hash covers). */
export type NewTaskFields = Omit<NewTask, 'id' | 'partition' | 'idempotencyKey' | 'idempotency' | 'dueAt' | 'state' | 'createdAt'>;

/**
 * A template's fields with every default applied: tenant from `metadata.tenant_id`, retry jitter
 * on by default for exponential backoff, the concurrency key only when given (so the request hash
 * of a submission without one is what it always was).
 * @param scheduledAt the requested run time (epoch ms), or null for "now"
 */
export function taskFields(t: TaskTemplate, scheduledAt: number | null, d: TaskDefaults): NewTaskFields {
  const meta = t.metadata ?? {};
  return {
    taskType: t.task_type,
    payload: t.payload === undefined ? null : t.payload,
    priority: t.priority ?? d.priority,
    queue: t.queue ?? d.queue,
    tenantId: meta.tenant_id ?? d.tenantId,
    correlationId: meta.correlation_id ?? null,
    metadata: meta,
    retry: {
      maxRetries: t.max_retries ?? d.maxRetries,
      backoff: t.retry_backoff ?? d.retryBackoff,
      delaySeconds: t.retry_delay_seconds ?? d.retryDelaySeconds,
      maxDelaySeconds: t.max_retry_delay_seconds ?? d.maxRetryDelaySeconds,
      jitter: t.retry_jitter ?? (t.retry_backoff ?? d.retryBackoff) === 'exponential',
    },
    timeoutSeconds: t.timeout_seconds ?? d.timeoutSeconds,
    scheduledAt,
    ...(t.concurrency_key ? { concurrencyKey: t.concurrency_key } : {}),
  };
}

/**
 * A new task from its fields: a UUID v7 id (unless one is given), its partition, its due time and
 * state. A time already past is due now, not then: a task cannot have waited before it was
 * submitted (a backdated task would otherwise count as long overdue: promoted by priority aging
 * ahead of higher priorities, first among its equals, and years of dispatch lag in /metrics).
 * @param opts.now creation time (epoch ms)
 * @param opts.partitions the number of partitions (the id picks one)
 * @param opts.idempotency the key, its request hash and until when it is held (epoch ms); null: none
 */
export function newTask(
  fields: NewTaskFields,
  opts: { now: number; partitions: number; id?: string; idempotency?: { key: string; requestHash: string; expiresAt: number } | null },
): NewTask & { state: 'SCHEDULED' | 'PENDING' } {
  const { now } = opts;
  const id = opts.id ?? uuidv7(now);
  const dueAt = fields.scheduledAt === null ? now : Math.max(fields.scheduledAt, now);
  const key = opts.idempotency ?? null;
  return {
    id,
    partition: partitionOf(id, opts.partitions),
    ...fields,
    idempotencyKey: key?.key ?? null,
    ...(key ? { idempotency: { requestHash: key.requestHash, expiresAt: key.expiresAt } } : {}),
    dueAt,
    state: dueAt > now ? 'SCHEDULED' : 'PENDING',
    createdAt: now,
  };
}
