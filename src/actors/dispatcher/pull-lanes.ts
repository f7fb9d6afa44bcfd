import { attemptCompletion } from '../../domain/attempt-completion';
import { HTTP_WORKER_PREFIX, type ExternalQueueSpec } from '../../domain/external-queues';
import type { DueEntry } from '../../domain/task';
import { queuesOf } from '../../observability/task-spans';
import type { LeasedAttempt, LeaseRequest } from '../../services/ports';
import type { AttemptCompletion, CompletionResult } from '../../storage/store';
import type { SchedulerDeps } from '../deps';
import type { PullGrant } from '../../cluster/messages';
import type { RemotePull, RemotePullDemand } from '../protocol';
import { byPartition } from '../router';
import { returnToOwners } from './claim-batch';
import { claimExternal, externalReadyQueues } from './external-claim';
import { observeStarts } from './work-item';
import {
  DEMAND_RENEW_MS,
  GRANT_REFUND_MS,
  REMOTE_DEMAND_MS,
  SHORT_POLL_ASK_MS,
  UNDELIVERED,
  remoteWaiterId,
  type PullLane,
  type Waiter,
} from './pull-waiters';

/** What the pull lanes need from the dispatcher that owns them. */
export interface PullLanesHooks {
  /** Records completions through the dispatcher's path. @returns the store's results, or null when the write failed */
  record(completions: AttemptCompletion[], now: number): Promise<CompletionResult[] | null>;
  /** Dispatches again (a lease request arrived, capacity was freed). */
  pump(): void;
  /** Ends a running attempt CANCELLED (a cancel). */
  cancel(taskId: string, attempt: number): void;
}

/**
 * HTTP pull queues inside the dispatcher (config `externalQueues` with `transport: "http"`;
 * docs/API.md "HTTP pull workers"): their ready tasks wait in the queue's own ready queues (the
 * same priorities, aging, tenant round-robin and token buckets as every task), and are claimed
 * only for a waiting lease request (`POST /api/v1/queues/{queue}/lease`): demand-driven, so no
 * task sits claimed with nobody to take it. A claim is the dispatcher's (PENDING → RUNNING,
 * attempt + 1, lease `leaseMs`, worker id `http:<worker_id>`, fenced by the partition's epoch in
 * cluster mode), at most `maxInFlight` attempts of the queue out at once, and up to the request's
 * `max`. A waiting request is answered by the first claim that gets tasks, by its timer (`[]`),
 * or at drain (`[]`). A client that goes away is dropped; what a claim in flight got for it is
 * recorded at once as a free retry (`lease_undelivered`). Completion, heartbeat and lease expiry
 * are those of every external attempt (`external-attempts.ts`).
 */
export class PullLanes {
  private readonly lanes = new Map<string, PullLane>();
  private readonly waiters = new Map<string, Waiter>();
  /**
   * Entries granted to other nodes' requests in the last {@link GRANT_REFUND_MS}, by task id, as
   * taken here (with the rate-limit tokens they were charged): one that comes back unclaimed
   * (given back, or its grant lost and the task read again) is refunded ({@link add}).
   */
  private readonly grantedOut = new Map<string, { entry: DueEntry; until: number }>();
  private closed = false;

  constructor(
    private readonly deps: SchedulerDeps,
    specs: Iterable<ExternalQueueSpec>,
    private readonly hooks: PullLanesHooks,
  ) {
    for (const spec of specs) {
      const ready = externalReadyQueues(deps);
      this.lanes.set(spec.name, { spec, ready, inFlight: new Map(), claiming: 0, waiters: [] });
    }
  }

  /**
   * Embedded mode, at start: the attempts of each pull queue that a previous process of this store
   * handed out and that still run (RUNNING, worker `http:…`: a graceful restart leaves them to their
   * workers) count against `maxInFlight` until they end, as this process's own do. Without this,
   * a restart let the queue hand out `maxInFlight` more while those were out. Not in cluster mode:
   * each member counts what it handed out, and the store does not say which member that was.
   * @throws the store's error (the caller logs it; the queue then counts only this process's)
   */
  async adoptRunning(): Promise<number> {
    if (this.deps.cluster) return 0;
    let adopted = 0;
    for (const lane of this.lanes.values()) {
      let cursor: string | null = null;
      do {
        const page = await this.deps.store.listTasks({
          status: 'RUNNING',
          queue: lane.spec.name,
          limit: 1000,
          ...(cursor ? { cursor } : {}),
        });
        for (const t of page.tasks) {
          if (!t.workerId?.startsWith(HTTP_WORKER_PREFIX) || lane.inFlight.has(t.id)) continue;
          lane.inFlight.set(t.id, { attempt: t.attempts, retry: t.retry });
          adopted++;
        }
        cursor = page.nextCursor;
      } while (cursor);
    }
    return adopted;
  }

  /** True when the entry's queue is a pull queue (it must be {@link add}ed here). */
  handles(entry: DueEntry): boolean {
    return entry.queue !== undefined && this.lanes.has(entry.queue);
  }

  /**
   * Queues a ready task of a pull queue (a second add of the same id is ignored). A task granted
   * from here lately that comes back as it was granted (same due time and state: not claimed, so
   * not a later retry) gets back the rate-limit tokens its grant took: without it, every grant
   * that the asking node gave back (already answered by another member's grant, or no room) used
   * up a token, and a tenant's rate limit let fewer starts through than it allows.
   */
  add(entry: DueEntry): void {
    const lane = this.lanes.get(entry.queue as string);
    if (!lane) return;
    const out = this.grantedOut.get(entry.id);
    if (out) {
      this.grantedOut.delete(entry.id);
      const now = this.deps.clock.now();
      if (now < out.until && out.entry.dueAt === entry.dueAt && out.entry.state === entry.state) lane.ready.refund([out.entry], now);
    }
    lane.ready.add(entry);
  }

  /**
   * A lease request: resolves with the attempts claimed for it, or `[]` at its `waitMs`, at drain,
   * or when its queue is not a pull queue here. For `waitMs` 0 with nothing to claim here: `[]` at
   * once, or, in a cluster whose other members own partitions, after at most
   * {@link SHORT_POLL_ASK_MS} of asking them ({@link askOthers}).
   * The caller then {@link pump}s (the dispatcher does, through its hook).
   */
  lease(req: LeaseRequest): Promise<LeasedAttempt[]> {
    const lane = this.lanes.get(req.queue);
    if (!lane || this.closed || this.waiters.has(req.waiterId)) return Promise.resolve([]);
    return new Promise((resolve) => {
      const w = this.wait(lane, req, resolve, null);
      this.hooks.pump();
      if (w.claiming || this.waiters.get(req.waiterId) !== w) return;
      if (req.waitMs > 0) this.demand(lane, w);
      else if (!this.askOthers(lane, w)) this.answer(w, []);
    });
  }

  /**
   * A request with no wait and nothing ready here asks the other members as a waiting request does
   * ({@link demand}) and waits up to {@link SHORT_POLL_ASK_MS} for their grants: without it, a
   * worker polling one member with `wait_s` 0 never got the tasks of partitions owned elsewhere.
   * @returns false when there is nobody to ask (no bus, every partition held here) or no room
   */
  private askOthers(lane: PullLane, w: Waiter): boolean {
    const { clock, router, cluster, config } = this.deps;
    if (!router.peerNotifier || !cluster || cluster.fences.size >= config.partitions) return false;
    w.deadline = clock.now() + SHORT_POLL_ASK_MS;
    w.timer = clock.setTimeout(() => this.timeUp(w), SHORT_POLL_ASK_MS);
    this.demand(lane, w);
    if (w.demanded) return true;
    clock.clearTimeout(w.timer);
    w.timer = null;
    return false;
  }

  /**
   * Another node's pull traffic (cluster mode; docs/CLUSTER.md "Pull queues"). A `demand`: a lease
   * request there waits with nothing ready; it waits here too, in line with this node's requests,
   * and what this node's owners have ready for it is taken as for any request (fairness,
   * priorities, rate limits) and granted, unclaimed, with this node's fencing tokens. A
   * `withdraw`: that request was answered or went away. `granted`: tasks another node's owners
   * took for a request waiting here: claimed for it with their tokens (a token no longer current
   * claims nothing), and what it cannot take goes back to their owners.
   */
  remote(msg: RemotePull): void {
    if (msg.kind === 'demand') return this.serveRemote(msg.from, msg.demand);
    if (msg.kind === 'withdraw') return this.leave(remoteWaiterId(msg.from, msg.waiterId));
    this.granted(msg.waiterId, msg.queue, msg.grants);
  }

  /** A request of another node waits here (see {@link remote}). */
  private serveRemote(from: string, d: RemotePullDemand): void {
    const lane = this.lanes.get(d.queue);
    const id = remoteWaiterId(from, d.waiterId);
    const waitMs = Math.min(d.waitMs, REMOTE_DEMAND_MS);
    if (!lane || this.closed || waitMs <= 0) return;
    const held = this.waiters.get(id);
    if (held) {
      // Sent again while it waits: served for another while, with what it may take now.
      if (held.timer) this.deps.clock.clearTimeout(held.timer);
      held.req = { ...held.req, max: d.max };
      held.timer = this.deps.clock.setTimeout(() => this.timeUp(held), waitMs);
      return;
    }
    this.wait(lane, { waiterId: id, queue: d.queue, workerId: '', max: d.max, waitMs }, () => undefined, { from, waiterId: d.waiterId });
    this.hooks.pump();
  }

  /** Tasks granted by another node's owners to request `waiterId` here (see {@link remote}). */
  private granted(waiterId: string, queue: string, grants: readonly PullGrant[]): void {
    const lane = this.lanes.get(queue);
    const w = this.waiters.get(waiterId);
    const entries = grants.map((g) => g.entry);
    if (!lane || !w || w.remote || w.claiming || w.req.queue !== queue || this.closed) return this.giveBack(entries);
    const room = Math.min(w.req.max, lane.spec.maxInFlight - lane.inFlight.size - lane.claiming);
    const taken = grants.slice(0, Math.max(0, room));
    this.giveBack(entries.slice(taken.length));
    if (taken.length === 0) return;
    lane.waiters = lane.waiters.filter((x) => x !== w);
    w.claiming = true;
    lane.claiming += taken.length;
    void this.claimFor(
      lane,
      w,
      taken.map((g) => g.entry),
      taken.map((g) => g.epoch),
    );
  }

  /** Entries this node will not claim go back to their partitions' owners (here or, as a `wake`, elsewhere). */
  private giveBack(entries: readonly DueEntry[]): void {
    if (entries.length > 0) this.deps.router.offer(entries);
  }

  /** A new waiter of `lane`, with its timer. */
  private wait(lane: PullLane, req: LeaseRequest, answer: Waiter['answer'], remote: Waiter['remote']): Waiter {
    const now = this.deps.clock.now();
    const w: Waiter = {
      req,
      answer,
      timer: null,
      claiming: false,
      timedOut: false,
      gone: false,
      deadline: now + req.waitMs,
      remote,
      demanded: false,
      renew: null,
    };
    this.waiters.set(req.waiterId, w);
    lane.waiters.push(w);
    if (req.waitMs > 0) w.timer = this.deps.clock.setTimeout(() => this.timeUp(w), req.waitMs);
    return w;
  }

  /**
   * A local request still waiting with nothing ready here: its demand goes to the other nodes
   * (cluster mode), for at most the room the queue has here and {@link REMOTE_DEMAND_MS}, and
   * again every {@link DEMAND_RENEW_MS} while it waits and no claim is in flight for it. None while
   * the queue is full here (asked again at the next renewal).
   */
  private demand(lane: PullLane, w: Waiter): void {
    const { clock, router } = this.deps;
    const peers = router.peerNotifier;
    if (w.renew) clock.clearTimeout(w.renew);
    w.renew = null;
    const waitMs = w.deadline - clock.now();
    if (!peers || w.remote || waitMs <= 0 || this.waiters.get(w.req.waiterId) !== w) return;
    const room = Math.min(w.req.max, lane.spec.maxInFlight - lane.inFlight.size - lane.claiming);
    if (room > 0 && !w.claiming) {
      w.demanded = true;
      peers.pullDemand({ waiterId: w.req.waiterId, queue: w.req.queue, max: room, waitMs: Math.min(waitMs, REMOTE_DEMAND_MS) });
    }
    if (waitMs > DEMAND_RENEW_MS) w.renew = clock.setTimeout(() => this.demand(lane, w), DEMAND_RENEW_MS);
  }

  /** The client of lease request `waiterId` went away: dropped; what a claim in flight gets for it is retried free. */
  leave(waiterId: string): void {
    const w = this.waiters.get(waiterId);
    if (!w) return;
    if (w.claiming) w.gone = true;
    else this.answer(w, []);
  }

  /**
   * Attempts whose lease answer did not reach its client (the connection closed before the answer
   * was written out): recorded at once as free retries (`lease_undelivered`), as for a client that
   * went away while its claim was in flight. Attempts no longer in flight here (already reported,
   * cancelled, swept) are left alone.
   */
  async undelivered(attempts: ReadonlyArray<{ taskId: string; attempt: number }>): Promise<void> {
    const now = this.deps.clock.now();
    const completions: AttemptCompletion[] = [];
    for (const a of attempts) {
      for (const lane of this.lanes.values()) {
        const held = lane.inFlight.get(a.taskId);
        if (held?.attempt === a.attempt) completions.push(attemptCompletion(a.taskId, a.attempt, UNDELIVERED, held.retry, now, 0));
      }
    }
    if (completions.length > 0) await this.hooks.record(completions, now);
    this.hooks.pump();
  }

  /** Answers every waiting request with `[]` and takes no more (drain, shutdown); claims in flight still answer theirs. */
  close(): void {
    this.closed = true;
    for (const w of [...this.waiters.values()]) if (!w.claiming) this.answer(w, []);
  }

  /**
   * Claims, for the waiting requests of each queue (oldest first), as many ready tasks as each
   * asked for and the queue's free in-flight capacity allows.
   * @returns when a queue parked on an empty token bucket may start again (epoch ms), or null
   */
  pump(now: number): number | null {
    let release: number | null = null;
    for (const lane of this.lanes.values()) {
      let free = lane.spec.maxInFlight - lane.inFlight.size - lane.claiming;
      while (free > 0 && lane.ready.size > 0 && lane.waiters.length > 0) {
        const w = lane.waiters[0];
        const entries = lane.ready.take(Math.min(free, w.req.max), now);
        if (entries.length === 0) break;
        lane.waiters.shift();
        if (w.remote) {
          this.grant(lane, w, entries); // claimed by the other node: takes none of this node's in-flight room
          continue;
        }
        w.claiming = true;
        free -= entries.length;
        lane.claiming += entries.length;
        void this.claimFor(lane, w, entries, undefined, now);
      }
      if (free > 0 && lane.ready.size > 0 && lane.waiters.length > 0) {
        const at = lane.ready.nextReleaseAt(now);
        if (at !== null && (release === null || at < release)) release = at;
      }
    }
    return release;
  }

  /** Cancel of a RUNNING pull task this dispatcher handed out: its attempt ends CANCELLED. @returns false when not one of them */
  abort(msg: { taskId: string; attempt: number }): boolean {
    for (const lane of this.lanes.values()) {
      if (lane.inFlight.get(msg.taskId)?.attempt !== msg.attempt) continue;
      this.hooks.cancel(msg.taskId, msg.attempt);
      return true;
    }
    return false;
  }

  /** These attempts ended (recorded, applied or found stale): their in-flight places are freed. */
  settled(completions: ReadonlyArray<{ taskId: string; attempt: number }>): void {
    for (const c of completions) {
      for (const lane of this.lanes.values()) if (lane.inFlight.get(c.taskId)?.attempt === c.attempt) lane.inFlight.delete(c.taskId);
    }
  }

  /** Ready, in-flight and waiting-request counts per pull queue (stats). */
  stats(): Array<{ queue: string; ready: number; inFlight: number; waiting: number }> {
    return [...this.lanes.values()].map((l) => ({
      queue: l.spec.name,
      ready: l.ready.size,
      inFlight: l.inFlight.size + l.claiming,
      waiting: l.waiters.length,
    }));
  }

  /** Grants `entries` to remote waiter `w` with this node's fencing tokens; the owners' credits come back. */
  private grant(lane: PullLane, w: Waiter, entries: DueEntry[]): void {
    const { router, cluster } = this.deps;
    const epochs = cluster?.fences.tokensFor(entries.map((e) => e.partition)) ?? [];
    for (const [p, ids] of byPartition(entries, (e) => e.id)) router.released(p, ids);
    const remote = w.remote as NonNullable<Waiter['remote']>;
    const now = this.deps.clock.now();
    for (const [id, out] of this.grantedOut) {
      if (out.until > now) break; // oldest first
      this.grantedOut.delete(id);
    }
    for (const entry of entries) this.grantedOut.set(entry.id, { entry, until: now + GRANT_REFUND_MS });
    this.answer(w, []);
    const grants = entries.map((entry, i) => ({ entry, epoch: epochs[i] ?? -1 }));
    if (router.peerNotifier) router.peerNotifier.pullGrant(remote.from, remote.waiterId, lane.spec.name, grants);
    else this.giveBack(entries);
  }

  private timeUp(w: Waiter): void {
    w.timer = null;
    if (w.claiming) w.timedOut = true;
    else this.answer(w, []);
  }

  private answer(w: Waiter, tasks: LeasedAttempt[]): void {
    if (w.timer) this.deps.clock.clearTimeout(w.timer);
    w.timer = null;
    if (w.renew) this.deps.clock.clearTimeout(w.renew);
    w.renew = null;
    this.waiters.delete(w.req.waiterId);
    const lane = this.lanes.get(w.req.queue);
    if (lane) lane.waiters = lane.waiters.filter((x) => x !== w);
    if (w.demanded) this.deps.router.peerNotifier?.pullWithdraw(w.req.waiterId);
    w.demanded = false;
    w.answer(tasks);
  }

  /**
   * Claims `entries` for waiter `w` under its worker id and answers it (or puts it back when nothing
   * was claimed). `epochs`: the fencing tokens of entries granted by another node's owners; absent,
   * this node's own. `now`: when the entries were taken from the ready queues (their rate-limit
   * tokens), the attempts' start (see `ClaimBatches.claimAndSend`); default the clock now.
   */
  private async claimFor(
    lane: PullLane,
    w: Waiter,
    entries: DueEntry[],
    epochs?: readonly number[],
    now = this.deps.clock.now(),
  ): Promise<void> {
    const { metrics, router, spans } = this.deps;
    const claimed = await claimExternal(
      this.deps,
      lane.spec.name,
      entries,
      `${HTTP_WORKER_PREFIX}${w.req.workerId}`,
      now,
      lane.spec.leaseMs,
      epochs,
    );
    for (const t of claimed) lane.inFlight.set(t.id, { attempt: t.attempt, retry: t.retry });
    observeStarts(metrics, claimed);
    lane.claiming -= entries.length;
    const refused = returnToOwners(router, entries, claimed, now);
    // Granted: no token or credit of this node's was taken; what was refused goes back to its owner.
    if (epochs) this.giveBack(refused);
    else lane.ready.refund(refused, now);
    w.claiming = false;
    if (w.gone) {
      this.answer(w, []);
      if (claimed.length > 0)
        await this.hooks.record(
          claimed.map((t) => attemptCompletion(t.id, t.attempt, UNDELIVERED, t.retry, now, 0)),
          now,
        );
    } else if (claimed.length > 0) {
      if (spans) spans.queueWaits(claimed, queuesOf(entries));
      const leased = claimed.map((t): LeasedAttempt => {
        const handOff = spans?.handOff(t, lane.spec.name) ?? null;
        handOff?.end(now);
        return {
          task: t,
          queue: lane.spec.name,
          leaseExpiresAt: now + lane.spec.leaseMs,
          traceparent: handOff?.traceparent ?? t.traceparent ?? null,
        };
      });
      this.answer(w, leased);
    } else if (w.timedOut || this.closed || w.req.waitMs <= 0) {
      this.answer(w, []);
    } else {
      lane.waiters.unshift(w); // nothing claimed (cancelled or taken meanwhile): it waits on, first in line
      if (epochs) this.demand(lane, w); // the owner that granted them no longer holds its demand
    }
    this.hooks.pump();
  }
}
