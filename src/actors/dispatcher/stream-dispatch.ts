import type Redis from 'ioredis';
import type { ExternalQueueSpec } from '../../domain/external-queues';

/**
 * One attempt as appended to an external queue's stream. Stream fields are strings:
 * `task_id`, `attempt` (decimal), `task_type`, `payload` (JSON text), `idempotency_key` and
 * `traceparent` (empty string when the task has none), `deadline` (ISO-8601 UTC: the attempt's
 * lease expiry; a completion after it is refused unless the consumer sent heartbeats), for a
 * workflow task `upstream_results` (JSON text, keyed by workflow-local id), and for a task whose
 * earlier attempt saved a checkpoint `checkpoint` (JSON text of its value: where to resume).
 */
export interface StreamMessage {
  taskId: string;
  attempt: number;
  taskType: string;
  payload: unknown;
  idempotencyKey: string | null;
  traceparent: string | null;
  /** Lease expiry of the attempt (epoch ms). */
  deadline: number;
  upstreamResults?: Record<string, unknown>;
  /** The value of the task's last checkpoint (absent: none). */
  lastCheckpoint?: unknown;
}

/** A pending entry the scheduler took over with XAUTOCLAIM (or one that was deleted meanwhile). */
export interface ReclaimedEntry {
  entryId: string;
  /** Null for an entry deleted from the stream while pending (XAUTOCLAIM lists only its id). */
  taskId: string | null;
  attempt: number | null;
}

/** Fields of a {@link StreamMessage}, in XADD argument order. */
export function streamFields(m: StreamMessage): string[] {
  const fields = [
    'task_id',
    m.taskId,
    'attempt',
    String(m.attempt),
    'task_type',
    m.taskType,
    'payload',
    JSON.stringify(m.payload ?? null),
    'idempotency_key',
    m.idempotencyKey ?? '',
    'traceparent',
    m.traceparent ?? '',
    'deadline',
    new Date(m.deadline).toISOString(),
  ];
  if (m.upstreamResults) fields.push('upstream_results', JSON.stringify(m.upstreamResults));
  if ('lastCheckpoint' in m) fields.push('checkpoint', JSON.stringify(m.lastCheckpoint ?? null));
  return fields;
}

/**
 * Redis Streams side of external queues, over an injected ioredis client (so the shared Redis
 * connection module can replace the client without touching this file). Every method is one
 * round trip (a pipeline where it sends several commands); errors reject the returned promise.
 */
export class StreamDispatch {
  constructor(private readonly redis: Redis) {}

  /**
   * Creates the queue's consumer group (XGROUP CREATE … MKSTREAM, from the start of the stream) so
   * consumers can XREADGROUP at once; an existing group is left as it is.
   */
  async ensureGroup(spec: ExternalQueueSpec): Promise<void> {
    try {
      await this.redis.xgroup('CREATE', spec.stream, spec.group, '0', 'MKSTREAM');
    } catch (err) {
      if (!/BUSYGROUP/.test((err as Error).message)) throw err;
    }
  }

  /**
   * Appends one entry per attempt (XADD with an auto id) in one pipeline.
   * @returns per message its entry id, or null when that XADD failed
   * @throws when the pipeline as a whole fails (connection lost)
   */
  async append(spec: ExternalQueueSpec, messages: StreamMessage[]): Promise<Array<string | null>> {
    if (messages.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const m of messages) pipeline.xadd(spec.stream, '*', ...streamFields(m));
    const results = (await pipeline.exec()) ?? [];
    return messages.map((_, i) => {
      const [err, id] = results[i] ?? [new Error('no reply'), null];
      return err ? null : (id as string);
    });
  }

  /**
   * Removes entries whose attempt has ended (completed, cancelled, lease expired): XACK in the
   * queue's group, then XDEL, so neither the pending list nor the stream keeps them.
   */
  async remove(spec: ExternalQueueSpec, entryIds: string[]): Promise<void> {
    if (entryIds.length === 0) return;
    await this.redis
      .pipeline()
      .xack(spec.stream, spec.group, ...entryIds)
      .xdel(spec.stream, ...entryIds)
      .exec();
  }

  /**
   * Takes over, for `consumer`, up to `max` entries of the queue's group that were delivered and
   * not acknowledged for at least `minIdleMs` (XAUTOCLAIM, following its cursor through the
   * pending list, at most `max` entries per call).
   */
  async reclaim(spec: ExternalQueueSpec, consumer: string, minIdleMs: number, max: number): Promise<ReclaimedEntry[]> {
    const out: ReclaimedEntry[] = [];
    let cursor = '0-0';
    do {
      const reply = (await this.redis.xautoclaim(
        spec.stream,
        spec.group,
        consumer,
        minIdleMs,
        cursor,
        'COUNT',
        Math.min(100, max - out.length),
      )) as [string, Array<[string, string[] | null] | null>, string[]?];
      cursor = reply[0];
      for (const entry of reply[1] ?? []) {
        if (!entry) continue;
        const [entryId, fields] = entry;
        out.push({ entryId, ...parseIdentity(fields) });
      }
      for (const deletedId of reply[2] ?? []) out.push({ entryId: deletedId, taskId: null, attempt: null });
    } while (cursor !== '0-0' && out.length < max);
    return out;
  }
}

/** `task_id` and `attempt` of an entry's field list (nulls when missing or malformed). */
function parseIdentity(fields: string[] | null): { taskId: string | null; attempt: number | null } {
  let taskId: string | null = null;
  let attempt: number | null = null;
  for (let i = 0; fields && i + 1 < fields.length; i += 2) {
    if (fields[i] === 'task_id') taskId = fields[i + 1];
    else if (fields[i] === 'attempt') attempt = Number.isInteger(Number(fields[i + 1])) ? Number(fields[i + 1]) : null;
  }
  return { taskId, attempt };
}
