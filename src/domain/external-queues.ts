/** One external queue as configured (config `externalQueues`); unset fields take the defaults. */
export interface ExternalQueueSettings {
  /** `stream` (default): attempts go to a Redis stream; `http`: workers pull them (`POST /api/v1/queues/{queue}/lease`). */
  transport?: ExternalTransport;
  stream?: string;
  group?: string;
  leaseMs?: number;
  maxInFlight?: number;
}

/** How an external queue's attempts reach their consumers: a Redis stream, or HTTP pull workers. */
export type ExternalTransport = 'stream' | 'http';

/** Consumer group consumers read an external queue's stream with, unless the queue names another. */
export const DEFAULT_CONSUMER_GROUP = 'scheduler';

/** Default most attempts of one external queue out in its stream at once. */
export const DEFAULT_MAX_IN_FLIGHT = 1000;

/** `worker_id` of an attempt handed to an external queue: this prefix + the queue name. */
export const EXTERNAL_WORKER_PREFIX = 'external:';

/** `worker_id` of an attempt leased by an HTTP pull worker: this prefix + the worker's own `worker_id`. */
export const HTTP_WORKER_PREFIX = 'http:';

/** An external queue with every default applied (config `externalQueues`). */
export interface ExternalQueueSpec {
  /** Queue name (a task's `queue`). */
  name: string;
  /** `stream`: a Redis stream (the fields below); `http`: pull workers lease its attempts (no Redis). */
  transport: ExternalTransport;
  /** Redis stream key the attempts are appended to. */
  stream: string;
  /** Consumer group consumers read with (XREADGROUP); the scheduler reclaims in it too. */
  group: string;
  /** Attempt lease (ms): without a completion or heartbeat for this long, the attempt is retried. */
  leaseMs: number;
  /** Most attempts of this queue in flight (claimed, not yet completed) at once. */
  maxInFlight: number;
  /** The `worker_id` its attempts carry: `external:<name>` (a pull queue's carry `http:<worker>` instead). */
  workerId: string;
}

/** The stream key of a queue when none is configured: `scheduler:queue:<name>`. */
export function defaultStreamOf(queue: string): string {
  return `scheduler:queue:${queue}`;
}

/**
 * The external queues of `config` by name, defaults applied: `stream` `scheduler:queue:<name>`,
 * `group` `scheduler`, `leaseMs` the top-level `leaseMs`, `maxInFlight` 1000. Empty map: none.
 */
export function externalQueueSpecs(config: {
  externalQueues?: Record<string, ExternalQueueSettings> | null;
  leaseMs: number;
}): Map<string, ExternalQueueSpec> {
  const specs = new Map<string, ExternalQueueSpec>();
  for (const [name, q] of Object.entries(config.externalQueues ?? {})) {
    specs.set(name, {
      name,
      transport: q.transport ?? 'stream',
      stream: q.stream ?? defaultStreamOf(name),
      group: q.group ?? DEFAULT_CONSUMER_GROUP,
      leaseMs: q.leaseMs ?? config.leaseMs,
      maxInFlight: q.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT,
      workerId: `${EXTERNAL_WORKER_PREFIX}${name}`,
    });
  }
  return specs;
}

/** True for the `worker_id` of an attempt handed to an external queue (a stream's, or an HTTP pull worker's). */
export function isExternalWorker(workerId: string | null | undefined): boolean {
  return typeof workerId === 'string' && (workerId.startsWith(EXTERNAL_WORKER_PREFIX) || workerId.startsWith(HTTP_WORKER_PREFIX));
}

/** The names of the queues of `externalQueues` that are Redis streams (`transport` `stream`, the default). */
export function streamQueueNames(externalQueues: Record<string, ExternalQueueSettings> | null | undefined): string[] {
  return Object.entries(externalQueues ?? {})
    .filter(([, q]) => (q.transport ?? 'stream') === 'stream')
    .map(([name]) => name);
}
