/** One external queue as configured (config `externalQueues`); unset fields take the defaults. */
export interface ExternalQueueSettings {
  stream?: string;
  group?: string;
  leaseMs?: number;
  maxInFlight?: number;
}

/** Consumer group consumers read an external queue's stream with, unless the queue names another. */
export const DEFAULT_CONSUMER_GROUP = 'scheduler';

/** Default most attempts of one external queue out in its stream at once. */
export const DEFAULT_MAX_IN_FLIGHT = 1000;

/** `worker_id` of an attempt handed to an external queue: this prefix + the queue name. */
export const EXTERNAL_WORKER_PREFIX = 'external:';

/** An external queue with every default applied (config `externalQueues`). */
export interface ExternalQueueSpec {
  /** Queue name (a task's `queue`). */
  name: string;
  /** Redis stream key the attempts are appended to. */
  stream: string;
  /** Consumer group consumers read with (XREADGROUP); the scheduler reclaims in it too. */
  group: string;
  /** Attempt lease (ms): without a completion or heartbeat for this long, the attempt is retried. */
  leaseMs: number;
  /** Most attempts of this queue in flight (claimed, not yet completed) at once. */
  maxInFlight: number;
  /** The `worker_id` its attempts carry: `external:<name>`. */
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
      stream: q.stream ?? defaultStreamOf(name),
      group: q.group ?? DEFAULT_CONSUMER_GROUP,
      leaseMs: q.leaseMs ?? config.leaseMs,
      maxInFlight: q.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT,
      workerId: `${EXTERNAL_WORKER_PREFIX}${name}`,
    });
  }
  return specs;
}

/** True for the `worker_id` of an attempt handed to an external queue. */
export function isExternalWorker(workerId: string | null | undefined): boolean {
  return typeof workerId === 'string' && workerId.startsWith(EXTERNAL_WORKER_PREFIX);
}
