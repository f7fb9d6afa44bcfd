import { randomUUID } from 'node:crypto';
import type { Config } from '../config';
import { leaseRequestSchema } from '../contract/external-schemas';
import { leasedTaskJson, type LeaseResponseJson } from '../contract/lease-json';
import type { LeaseRequestBody } from '../contract/types';
import { SchemaValidator } from '../contract/validation';
import { ForbiddenError, NotPullQueueError, ServiceUnavailableError } from '../domain/errors';
import { externalQueueSpecs, type ExternalQueueSpec } from '../domain/external-queues';
import { Caller, OPEN_CALLER } from '../tenancy/caller';
import type { ExternalGateway } from './ports';
import { storeUnavailable, type StoreHealth } from '../storage/store-health';

export interface PullLeaseServiceDeps {
  config: Config;
  /** Null when no dispatcher runs (route tests without actors): lease requests answer 503. */
  gateway: ExternalGateway | null;
  /** The store's health: while it has a fault, a lease request answers 503 (not an empty lease). */
  health?: Pick<StoreHealth, 'fault'>;
}

/**
 * Lease requests of HTTP pull workers (`POST /api/v1/queues/{queue}/lease`): a worker in the
 * user's own process asks for up to `max` due tasks of a pull queue (`externalQueues` with
 * `transport: "http"`) and waits up to `wait_s` seconds for one (long poll). The dispatcher claims
 * them for the request exactly as it claims for its own workers (RUNNING, attempt + 1, lease
 * `leaseMs`, the same tenant fairness, priorities and rate limits) and only while a request waits.
 * The worker then reports with the external-consumer endpoints (heartbeat, complete, checkpoint,
 * progress, logs), fenced by the attempt number (`ExternalTaskService`). Pattern: the long-poll
 * lease of Cloud Tasks' pull queues and of graphile-worker's `get_job`, over HTTP.
 */
export class PullLeaseService {
  private readonly validator = new SchemaValidator();
  private readonly specs: Map<string, ExternalQueueSpec>;

  constructor(private readonly deps: PullLeaseServiceDeps) {
    this.specs = externalQueueSpecs(deps.config);
  }

  /**
   * Leases up to `max` tasks of `queue`, answering as soon as at least one was claimed, or with
   * `tasks: []` after `wait_s` seconds, for `wait_s` 0 when none is ready at once (in a cluster
   * after asking the other members for up to 200 ms, `SHORT_POLL_ASK_MS`), or when the service
   * stops. `signal`: the client went away (its request is dropped; attempts a claim in
   * flight got for it are retried at once without counting against their retries).
   * Admin keys only (a worker takes every tenant's tasks of its queue).
   * @throws ValidationError (400, `details.field`); ForbiddenError (403, a tenant's key);
   *   NotPullQueueError (404, `details.queue`); ServiceUnavailableError (503) without a dispatcher;
   *   StoreUnavailableError (503) while the store has a fault (at the request, or after a wait that leased nothing)
   */
  async lease(queue: string, body: LeaseRequestBody, caller: Caller = OPEN_CALLER, signal?: AbortSignal): Promise<LeaseResponseJson> {
    this.validator.assert(leaseRequestSchema, body);
    if (!caller.admin) throw new ForbiddenError('leasing tasks of a queue');
    const spec = this.specs.get(queue);
    if (!spec || spec.transport !== 'http') throw new NotPullQueueError(queue, spec ? spec.transport : null);
    const gateway = this.deps.gateway;
    if (!gateway) throw new ServiceUnavailableError('the dispatcher is not running');
    if (signal?.aborted) return { tasks: [] };
    this.assertStore();
    const waiterId = randomUUID();
    const leave = () => gateway.leaveLease(waiterId);
    signal?.addEventListener('abort', leave, { once: true });
    try {
      const leased = await gateway.lease({
        waiterId,
        queue,
        workerId: body.worker_id,
        max: body.max ?? 1,
        waitMs: Math.round((body.wait_s ?? 0) * 1000),
      });
      // Nothing leased while the store is away: say so, so a worker can tell an outage from an empty queue.
      if (leased.length === 0 && !signal?.aborted) this.assertStore();
      return { tasks: leased.map(leasedTaskJson) };
    } finally {
      signal?.removeEventListener('abort', leave);
    }
  }

  /**
   * The answer with `tasks` never reached its client (its connection closed before the answer was
   * written out): their attempts are retried at once, free (`lease_undelivered`), instead of
   * waiting out their lease and being charged as lost.
   */
  undelivered(tasks: LeaseResponseJson['tasks']): void {
    if (tasks.length > 0) this.deps.gateway?.leaseUndelivered(tasks.map((t) => ({ taskId: t.task_id, attempt: t.attempt })));
  }

  /** @throws StoreUnavailableError (503, `Retry-After`) while the store has a fault */
  private assertStore(): void {
    const fault = this.deps.health?.fault;
    if (fault) throw storeUnavailable(fault);
  }
}
