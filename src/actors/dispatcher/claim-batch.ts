import type { ClaimedTask, DueEntry } from '../../domain/task';
import { StoreUnavailableError } from '../../domain/errors';
import { lateClaimOutcome } from '../../domain/lost-attempt';
import type { ReadyQueues } from '../../domain/ready-queues';
import { queuesOf } from '../../observability/task-spans';
import { ActorRouter, byPartition } from '../router';
import type { SchedulerDeps } from '../deps';
import type { WorkItem } from '../protocol';
import type { FinishedAttempt, RunningAttempt } from './attempt-watchdog';
import type { WorkerSlot } from './worker-pool';
import { observeStarts, takeWorkItem } from './work-item';

/** What a claim reads and calls on its dispatcher. */
export interface ClaimHost {
  /** Attempts the dispatcher runs, by task id: a claimed attempt is added. */
  readonly running: Map<string, RunningAttempt>;
  /** Attempts were added to `running` (the watchdog's overrun check arms). */
  attemptsStarted(): void;
  /** Queues the claimed attempts for `slot`'s next `run` message; `startedAt` is the earliest of their starts (epoch ms). */
  send(slot: WorkerSlot, items: WorkItem[], startedAt: number): void;
  /** A claim was answered with nothing to run (a drain may be over). */
  settle(): void;
  /** Dispatches again (credits or concurrency slots came back). */
  pump(): void;
  /** Records attempts in `running` that ended (here: claimed too late to start). */
  finish(results: FinishedAttempt[]): void;
}

/**
 * The dispatcher's claims: one store claim (PENDING → RUNNING, lease, worker id) per batch of
 * ready entries for one worker, the entries returned to their owners, refused ones' credits and
 * limits given back, and the claimed attempts queued for the worker.
 */
export class ClaimBatches {
  /** Claims sent to the store and not yet answered (a drain waits for them too). */
  private inFlight = 0;

  constructor(
    private readonly deps: SchedulerDeps,
    private readonly host: ClaimHost,
  ) {}

  /** Claims sent and not yet answered. */
  get pending(): number {
    return this.inFlight;
  }

  /**
   * Claims `entries` for `slot` (whose credits the caller took for them) and queues what was
   * claimed for it. A failed claim (store error) claims nothing: the tasks stay waiting.
   * @param ready the ready queues the entries came from (refused ones' tokens and key slots go back there)
   * @param now the instant the entries were taken from `ready` (epoch ms; default: the clock now):
   *   the attempts start at it, so their `started_at` is the instant their rate-limit tokens were
   *   taken, and no 1 s window of `started_at` holds more starts than the limit (a later reading,
   *   a millisecond on, let 11 starts at 10/s fall within 999 ms)
   */
  async claimAndSend(
    slot: WorkerSlot,
    entries: DueEntry[],
    ready: Pick<ReadyQueues, 'refund'>,
    now = this.deps.clock.now(),
  ): Promise<void> {
    const { store, clock, metrics, log } = this.deps;
    let claimed: ClaimedTask[] = [];
    // Cluster mode: each task's fencing token is its partition's lease epoch (-1: not held, not claimed).
    const epochs = this.deps.cluster?.fences.tokensFor(entries.map((e) => e.partition));
    this.inFlight++;
    try {
      // Each entry's seq is a lookup hint (SQLite: the rowid); the id still decides.
      const seqs = entries.map((e) => e.seq);
      claimed = await store.claimTasks(
        entries.map((e) => e.id),
        slot.id,
        now,
        this.deps.config.leaseMs,
        epochs,
        seqs,
      );
    } catch (err) {
      // A store fault is logged once, by the store's health.
      if (!(err instanceof StoreUnavailableError)) log.error({ err }, 'claim failed; the tasks stay waiting and will be reloaded');
    } finally {
      this.inFlight--;
    }
    const refused = returnToOwners(this.deps.router, entries, claimed, now);
    slot.credits += entries.length - claimed.length;
    ready.refund(refused, now);
    const late = lateClaims(claimed, epochs, entries, this.deps, now);
    if (late.length > 0) {
      // Not started: recorded at once as free retries (a compare-and-set on the attempt: refused
      // if the lease sweep or the partition's new owner got to it first).
      const waited = clock.now() - now;
      log.warn(
        { count: late.length, waited_ms: waited },
        'claim answered after its attempts lease or partition lease ended; its attempts are not started and are retried free',
      );
      const lateIds = new Set(late.map((t) => t.id));
      claimed = claimed.filter((t) => !lateIds.has(t.id));
      slot.credits += late.length;
      ready.refund(
        entries.filter((e) => lateIds.has(e.id)),
        now,
      );
      const lateMono = clock.monotonic();
      for (const t of late) this.host.running.set(t.id, { task: t, workerId: slot.id, startedMono: lateMono });
      this.host.finish(late.map((t) => ({ id: t.id, attempt: t.attempt, outcome: lateClaimOutcome(waited), durationMs: 0 })));
    }
    if (claimed.length === 0) {
      this.host.settle();
      return this.host.pump();
    }
    const items: WorkItem[] = [];
    // Tracing configured: each attempt's queue wait (due → claim) becomes a span of its task's trace.
    const queues = this.deps.spans ? queuesOf(entries) : null;
    if (queues) this.deps.spans?.queueWaits(claimed, queues);
    // Only claims with keyed tasks pay for the id → key map (most claims have none).
    const keys = entries.some((e) => e.concurrencyKey !== undefined)
      ? new Map(entries.filter((e) => e.concurrencyKey !== undefined).map((e) => [e.id, e.concurrencyKey as string]))
      : null;
    let oldestStart = Infinity;
    const startedMono = clock.monotonic();
    for (const t of claimed) {
      if (t.startedAt < oldestStart) oldestStart = t.startedAt;
      const concurrencyKey = keys?.get(t.id);
      this.host.running.set(t.id, { task: t, workerId: slot.id, startedMono, ...(concurrencyKey !== undefined ? { concurrencyKey } : {}) });
      items.push(takeWorkItem(t, queues ? { queue: queues.get(t.id) } : undefined));
    }
    this.host.attemptsStarted();
    observeStarts(metrics, claimed);
    this.host.send(slot, items, oldestStart);
    // Refused entries gave back their credits and their keys' slots: the tasks set aside may start.
    if (refused.length > 0) this.host.pump();
  }
}

/**
 * Claims ahead of their due time (`Store.claimTasksAhead`, tasks due by `until`, epoch ms) the
 * entries for `slot`, and hands what was claimed to the host to hold. Every entry goes back to its
 * owner as released (claimed, or refused: cancelled, claimed or moved past `until` meanwhile); a
 * failed claim (store error) claims nothing and the tasks stay waiting in the store. No credits
 * are taken: a held attempt takes its worker's slot when it is sent.
 * @returns the attempts claimed (never throws)
 */
export async function claimAhead(deps: SchedulerDeps, slot: WorkerSlot, entries: DueEntry[], until: number): Promise<ClaimedTask[]> {
  const { store, clock, log, config } = deps;
  let claimed: ClaimedTask[] = [];
  try {
    claimed =
      (await store.claimTasksAhead?.(
        entries.map((e) => e.id),
        slot.id,
        clock.now(),
        until,
        config.leaseMs,
        entries.map((e) => e.seq),
      )) ?? [];
  } catch (err) {
    if (!(err instanceof StoreUnavailableError)) log.error({ err }, 'claim ahead failed; the tasks stay waiting and will be reloaded');
  }
  // As of `until`: no refused entry is early, so none is offered again (each is released).
  returnToOwners(deps.router, entries, claimed, until);
  return claimed;
}

/**
 * The claimed attempts that must not start: the claim was answered when their attempt lease
 * (`now + leaseMs`) had already ended, or (cluster mode) when this process no longer held the
 * epoch it claimed their partition with and did not give it up by hand-over (`PartitionFences.mayStart`).
 * Both mean this process stalled (SIGSTOP, a long pause) between sending the claim and reading its
 * answer: meanwhile the attempt-lease sweeper or the partition's new owner may have run the task
 * again, and the member that lost the partition must dispatch nothing of it. A claim answered
 * after a planned hand-over starts: the store granted it before the new owner's fence.
 * @param epochs the fencing tokens the claim was sent with (index = entry), or undefined (embedded)
 * @param now the clock reading the claim was written with (epoch ms)
 */
export function lateClaims(
  claimed: readonly ClaimedTask[],
  epochs: readonly number[] | undefined,
  entries: readonly DueEntry[],
  deps: Pick<SchedulerDeps, 'clock' | 'config' | 'cluster'>,
  now: number,
): ClaimedTask[] {
  if (claimed.length === 0) return [];
  if (deps.clock.now() >= now + deps.config.leaseMs) return [...claimed];
  const fences = deps.cluster?.fences;
  if (!fences || !epochs) return [];
  const sentWith = new Map(entries.map((e, i) => [e.id, epochs[i]]));
  return claimed.filter((t) => !fences.mayStart(t.partition, sentWith.get(t.id)));
}

/**
 * Gives the entries of a claim batch back to their partition owners: `released` for those
 * claimed or refused for good, and `offer` again for a refused entry that was handed out before
 * its due mark (SCHEDULED or RETRYING) with a due time the clock, read at the claim, has not
 * reached. Its owner saw it due, so the clock stepped back since the hand-out (the `Clock`
 * contract allows it) and the claim refused it as early; back in the owner's window, it is handed
 * out again once the clock passes its due time, instead of waiting for the next window read.
 * @param now the clock's reading the claim was written with (epoch ms)
 * @returns the refused entries (cancelled, rescheduled or claimed meanwhile, or early)
 */
export function returnToOwners(
  router: ActorRouter,
  entries: readonly DueEntry[],
  claimed: readonly ClaimedTask[],
  now: number,
): DueEntry[] {
  if (claimed.length === entries.length) {
    // The usual case: every entry was claimed (a claim answers only ids it was given, each once),
    // so all are released and none refused; no set of ids to build and look up.
    for (const [p, ids] of byPartition(entries, (e) => e.id)) router.released(p, ids);
    return [];
  }
  const won = new Set(claimed.map((t) => t.id));
  const early = (e: DueEntry) => !won.has(e.id) && e.state !== 'PENDING' && e.dueAt > now;
  for (const [p, list] of byPartition(entries, (e) => e)) {
    if (!router.hasOwner(p)) continue;
    const again = list.filter(early);
    const done = again.length === 0 ? list : list.filter((e) => !early(e));
    if (done.length > 0)
      router.released(
        p,
        done.map((e) => e.id),
      );
    if (again.length > 0) router.offerLocal(p, again);
  }
  return entries.filter((e) => !won.has(e.id));
}
