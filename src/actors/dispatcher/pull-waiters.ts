import type { TimerHandle } from '../../domain/clock';
import type { ExternalQueueSpec } from '../../domain/external-queues';
import type { ReadyQueues } from '../../domain/ready-queues';
import type { AttemptOutcome } from '../../domain/retry-policy';
import type { RetrySettings } from '../../domain/task';
import type { LeasedAttempt, LeaseRequest } from '../../services/ports';

/*
 * The pull lanes' waiting lease requests and queues (`pull-lanes.ts`), the timings of their
 * demands to other cluster members (docs/CLUSTER.md "Pull queues"), and the outcome of an attempt
 * whose lease answer never reached its client.
 */

/** A lease request waiting for tasks of its queue. */
export interface Waiter {
  req: LeaseRequest;
  answer: (tasks: LeasedAttempt[]) => void;
  timer: TimerHandle | null;
  /** A claim for it is in flight (it is out of its lane's queue of waiters meanwhile). */
  claiming: boolean;
  /** Its time is up while a claim was in flight: answered by that claim, whatever it gets. */
  timedOut: boolean;
  /** Its client went away while a claim was in flight: what the claim gets is retried free. */
  gone: boolean;
  /** When its wait ends (epoch ms). */
  deadline: number;
  /** Another node's lease request served here (`pull` message): answered by a grant, never claimed for here. */
  remote: { from: string; waiterId: string } | null;
  /** Its demand went to the other nodes (`pull`): withdrawn when it is answered. */
  demanded: boolean;
  /** Sends its demand again ({@link DEMAND_RENEW_MS}) while it waits. */
  renew: TimerHandle | null;
}

export interface PullLane {
  spec: ExternalQueueSpec;
  ready: ReadyQueues;
  /** Attempts handed out (or being handed out) and not ended: task id → attempt and its retry settings. */
  inFlight: Map<string, { attempt: number; retry: RetrySettings }>;
  /** Entries taken from `ready` whose claim is not answered yet (they count against maxInFlight). */
  claiming: number;
  /** Lease requests waiting, oldest first. */
  waiters: Waiter[];
}

/**
 * How long another node's demand is served here (ms). Its node sends it again every
 * {@link DEMAND_RENEW_MS} while its request waits, so the demand of a node that died or froze
 * ends within this, instead of drawing grants for the rest of its request's wait (up to 30 s).
 */
export const REMOTE_DEMAND_MS = 2000;
/**
 * How long an owner remembers the tasks it granted to another node's request (ms), to refund
 * their rate-limit tokens when they come back unclaimed (`PullLanes.add`). A give-back comes
 * after the asking node's claim, within a few seconds even under load.
 */
export const GRANT_REFUND_MS = 10_000;
/** How often a waiting request's demand is sent again (ms): well within {@link REMOTE_DEMAND_MS}. */
export const DEMAND_RENEW_MS = 1500;
/**
 * How long a lease request with no wait (`wait_s` 0) that finds nothing ready on its member waits
 * for the other members' grants, in a cluster whose other members own partitions (ms). Like a
 * short poll of Amazon SQS, which answers from a sample of its servers, it may still answer `[]`
 * while another member has tasks ready: a grant that comes later goes back to its owner, and the
 * next request asks again. Without it, a worker polling one member with no wait never got the
 * tasks of the partitions the others own. A bus round trip and the owner's take are a few ms.
 */
export const SHORT_POLL_ASK_MS = 200;

/** The outcome of an attempt claimed for a lease request whose client went away first: retried at once, free. */
export const UNDELIVERED: AttemptOutcome = {
  kind: 'failed',
  message: 'the lease request it was claimed for was gone before the answer; retried without counting against its retries',
  errorType: 'lease_undelivered',
  permanent: false,
  free: true,
};

/** The waiter id, here, of another node's lease request (never a local request's: those are UUIDs). */
export function remoteWaiterId(from: string, waiterId: string): string {
  return `${from}/${waiterId}`;
}
