import type { AttemptOutcome } from '../../domain/retry-policy';
import { attemptCompletion } from '../../domain/attempt-completion';
import { ReadyQueues } from '../../domain/ready-queues';
import { returnToOwners } from './claim-batch';
import type { ClaimedTask, DueEntry } from '../../domain/task';
import type { SchedulerDeps } from '../deps';
import { observeStarts } from './work-item';
import { queuesOf } from '../../observability/task-spans';
import type { AttemptCompletion, CompletionResult } from '../../storage/store';
import type { ExternalQueueSpec } from '../../domain/external-queues';
import { cancelledWhileRunning } from './external-attempts';
import type { StreamDispatch, StreamMessage } from './stream-dispatch';

/** Consumer name the scheduler takes stale pending entries over with (XAUTOCLAIM). */
export const RECLAIM_CONSUMER = 'scheduler-reclaimer';

/** What the lanes need from the dispatcher that owns them. */
export interface ExternalLanesHooks {
  /**
   * Records completions through the dispatcher's path (compare-and-set, retries routed, workflow
   * releases, cron ends, metrics). @returns the store's results, or null when the write failed
   */
  record(completions: AttemptCompletion[], now: number): Promise<CompletionResult[] | null>;
  /** Dispatches again (capacity was freed). */
  pump(): void;
}

interface InFlight {
  attempt: number;
  /** Stream entry id once XADD answered. */
  entryId: string | null;
}

interface Lane {
  spec: ExternalQueueSpec;
  ready: ReadyQueues;
  inFlight: Map<string, InFlight>;
  /** Entries taken from `ready` whose claim is not answered yet (they count against maxInFlight). */
  claiming: number;
}

/**
 * External queues inside the dispatcher (docs/DESIGN.md §6; docs/EXTERNAL-QUEUES.md): tasks whose `queue` is configured
 * in `externalQueues` wait in their queue's own ready queues (same priorities, aging, tenant
 * round-robin and token buckets as worker tasks: the buckets are shared), and instead of going
 * to a forked worker they are claimed (PENDING → RUNNING, attempt + 1, lease `leaseMs`, worker id
 * `external:<queue>`) and appended to the queue's Redis stream. Flow control: at most
 * `maxInFlight` attempts per queue are out at once. An attempt ends by a consumer's completion
 * or its lease expiring (both in `external-attempts.ts`: then it is retried with backoff like a
 * lost worker, `worker_lost`, and a new attempt gets a new entry), or a cancel ({@link abort}).
 * Entries of ended attempts are acknowledged and deleted; entries left pending longer than the
 * lease by a consumer that died are taken over with XAUTOCLAIM ({@link reclaimStale}, after each
 * lease sweep) and deleted once their attempt is over.
 */
export class ExternalLanes {
  private readonly lanes = new Map<string, Lane>();

  constructor(
    private readonly deps: SchedulerDeps,
    private readonly streams: StreamDispatch,
    specs: Map<string, ExternalQueueSpec>,
    private readonly hooks: ExternalLanesHooks,
  ) {
    const { limits, config, metrics } = deps;
    for (const spec of specs.values()) {
      const ready = new ReadyQueues({
        weightOf: limits.weightOf,
        agingMs: config.priorityAgingMs,
        typeBucket: limits.typeBucket,
        tenantBucket: limits.tenantBucket,
        onWait: (kind, key) => metrics.rateLimitWaits.inc({ limit: kind, key }),
      });
      this.lanes.set(spec.name, { spec, ready, inFlight: new Map(), claiming: 0 });
    }
  }

  /** Creates each queue's consumer group. @throws when Redis fails */
  async start(): Promise<void> {
    for (const lane of this.lanes.values()) await this.streams.ensureGroup(lane.spec);
  }

  /** Nothing to stop: the lease sweep is `ExternalAttempts`' (kept for the dispatcher's symmetry). */
  stop(): void {}

  /** True when the entry's queue is an external queue (it must be {@link add}ed here). */
  handles(entry: DueEntry): boolean {
    return entry.queue !== undefined && this.lanes.has(entry.queue);
  }

  /** Queues a ready task of an external queue (a second add of the same id is ignored). */
  add(entry: DueEntry): void {
    this.lanes.get(entry.queue as string)?.ready.add(entry);
  }

  /** Ready and in-flight counts per external queue (stats). */
  stats(): Array<{ queue: string; ready: number; inFlight: number }> {
    return [...this.lanes.values()].map((l) => ({ queue: l.spec.name, ready: l.ready.size, inFlight: l.inFlight.size + l.claiming }));
  }

  /**
   * Hands each queue as many ready tasks as its free in-flight capacity allows, in batches of
   * `workerBatchMax`. @returns when a queue parked on an empty token bucket may start again (epoch
   * ms; the dispatcher arms its one release timer), or null
   */
  pump(now: number): number | null {
    let release: number | null = null;
    for (const lane of this.lanes.values()) {
      let free = lane.spec.maxInFlight - lane.inFlight.size - lane.claiming;
      while (free > 0 && lane.ready.size > 0) {
        const entries = lane.ready.take(Math.min(free, this.deps.config.workerBatchMax), now);
        if (entries.length === 0) break;
        free -= entries.length;
        lane.claiming += entries.length;
        void this.claimAndAppend(lane, entries);
      }
      if (free > 0 && lane.ready.size > 0) {
        const at = lane.ready.nextReleaseAt(now);
        if (at !== null && (release === null || at < release)) release = at;
      }
    }
    return release;
  }

  /**
   * Cancel of a RUNNING external task: a consumer cannot be signalled, so the attempt ends
   * CANCELLED at once (compare-and-set), its entry is deleted (a consumer that has not read it
   * never sees it), and a later completion of that attempt is refused (409 `ATTEMPT_CONFLICT`).
   * @returns false when this dispatcher has no such attempt in flight (not an external task)
   */
  abort(msg: { taskId: string; attempt: number }): boolean {
    const lane = this.laneOf(msg.taskId, msg.attempt);
    if (!lane) return false;
    void this.hooks.record([cancelledWhileRunning(msg.taskId, msg.attempt)], this.deps.clock.now()).then(() => this.hooks.pump());
    return true;
  }

  /**
   * The dispatcher recorded these completions (applied or found stale: either way the attempt is
   * over): their in-flight places are freed and their stream entries acknowledged and deleted.
   */
  settled(completions: ReadonlyArray<{ taskId: string; attempt: number }>): void {
    const toRemove = new Map<Lane, string[]>();
    for (const c of completions) {
      const lane = this.laneOf(c.taskId, c.attempt);
      if (!lane) continue;
      const f = lane.inFlight.get(c.taskId) as InFlight;
      lane.inFlight.delete(c.taskId);
      if (f.entryId) toRemove.set(lane, [...(toRemove.get(lane) ?? []), f.entryId]);
    }
    for (const [lane, ids] of toRemove) this.removeEntries(lane, ids);
  }

  private laneOf(taskId: string, attempt: number): Lane | null {
    for (const lane of this.lanes.values()) if (lane.inFlight.get(taskId)?.attempt === attempt) return lane;
    return null;
  }

  private removeEntries(lane: Lane, ids: string[]): void {
    this.streams
      .remove(lane.spec, ids)
      .catch((err) => this.deps.log.warn({ err, queue: lane.spec.name }, 'could not delete stream entries of ended attempts'));
  }

  /**
   * Claims a batch for the queue and appends one stream entry per claimed attempt. An attempt
   * whose XADD failed (Redis down) is recorded at once as a retryable `dispatch_failed` failure,
   * so it runs again after its backoff.
   */
  private async claimAndAppend(lane: Lane, entries: DueEntry[]): Promise<void> {
    const { store, clock, log, metrics, router } = this.deps;
    const now = clock.now();
    let claimed: ClaimedTask[] = [];
    try {
      // Cluster mode: each task's fencing token is its partition's lease epoch, as in the dispatcher.
      const epochs = this.deps.cluster?.fences.tokensFor(entries.map((e) => e.partition));
      claimed = await store.claimTasks(
        entries.map((e) => e.id),
        lane.spec.workerId,
        now,
        lane.spec.leaseMs,
        epochs,
      );
    } catch (err) {
      log.error({ err, queue: lane.spec.name }, 'claim failed; the tasks stay waiting and will be reloaded');
    }
    for (const t of claimed) lane.inFlight.set(t.id, { attempt: t.attempt, entryId: null });
    observeStarts(metrics, claimed);
    lane.claiming -= entries.length;
    lane.ready.refund(returnToOwners(router, entries, claimed, now), now);
    if (claimed.length === 0) return this.hooks.pump();
    // Tracing configured: the queue wait and the hand-off of each attempt are spans of its task's
    // trace, and the stream entry carries the hand-off span's context for the consumer's spans.
    const spans = this.deps.spans;
    if (spans) spans.queueWaits(claimed, queuesOf(entries));
    const handOffs = spans ? claimed.map((t) => spans.handOff(t, lane.spec.name)) : null;
    let ids: Array<string | null>;
    try {
      ids = await this.streams.append(
        lane.spec,
        claimed.map((t, i) => messageOf(t, now + lane.spec.leaseMs, handOffs?.[i]?.traceparent)),
      );
    } catch (err) {
      log.error({ err, queue: lane.spec.name }, 'XADD failed; the attempts will be retried');
      ids = claimed.map(() => null);
    }
    if (handOffs) {
      const appended = clock.now();
      handOffs.forEach((h, i) => h?.end(appended, ids[i] === null ? `could not append to stream ${lane.spec.stream}` : undefined));
    }
    const failed: AttemptCompletion[] = [];
    const orphanEntries: string[] = [];
    claimed.forEach((t, i) => {
      const id = ids[i];
      const f = lane.inFlight.get(t.id);
      if (id === null) {
        const outcome: AttemptOutcome = {
          kind: 'failed',
          message: `could not append to stream ${lane.spec.stream}`,
          errorType: 'dispatch_failed',
          permanent: false,
        };
        failed.push(attemptCompletion(t.id, t.attempt, outcome, t.retry, now, 0));
      } else if (f && f.attempt === t.attempt) {
        f.entryId = id;
      } else {
        orphanEntries.push(id); // the attempt ended before XADD answered (a very fast consumer, a cancel)
      }
    });
    if (orphanEntries.length > 0) this.removeEntries(lane, orphanEntries);
    if (failed.length > 0) await this.hooks.record(failed, now);
    this.hooks.pump();
  }

  /**
   * Entries delivered to a consumer and not acknowledged for a lease are taken over (XAUTOCLAIM);
   * those whose attempt is no longer in flight are acknowledged and deleted.
   */
  async reclaimStale(): Promise<void> {
    for (const lane of this.lanes.values()) {
      const reclaimed = await this.streams.reclaim(lane.spec, RECLAIM_CONSUMER, lane.spec.leaseMs, 1000);
      const stale = reclaimed.filter((r) => r.taskId === null || r.attempt === null || lane.inFlight.get(r.taskId)?.attempt !== r.attempt);
      if (stale.length > 0)
        this.removeEntries(
          lane,
          stale.map((r) => r.entryId),
        );
    }
  }
}

/**
 * The stream message of a claimed attempt; `deadline` is its lease expiry (epoch ms).
 * @param traceparent the hand-off span's context (tracing configured), else the stored one goes on
 */
function messageOf(t: ClaimedTask, deadline: number, traceparent?: string): StreamMessage {
  return {
    taskId: t.id,
    attempt: t.attempt,
    taskType: t.taskType,
    payload: t.payload,
    idempotencyKey: t.idempotencyKey,
    traceparent: traceparent ?? t.traceparent ?? null,
    deadline,
    ...(t.upstreamResults ? { upstreamResults: t.upstreamResults } : {}),
    ...('lastCheckpoint' in t ? { lastCheckpoint: t.lastCheckpoint } : {}),
  };
}
