import type { WorkerSlot } from './worker-pool';
import type { WorkItem } from '../protocol';
import type { SchedulerDeps } from '../deps';
import { FinishedAttempt, lostOutcome } from './attempt-watchdog';
import { lateAttempts, RunningMap } from './running-attempts';

/**
 * Sends one `run` message; `items` are the attempts it carries, `oldestStart` the earliest
 * `startedAt` among them (epoch ms; their attempt leases run from their starts).
 */
export type SendRun = (slot: WorkerSlot, items: WorkItem[], oldestStart: number) => void;

/**
 * Gathers the attempts claimed for each worker during one event-loop iteration into one `run`
 * message per worker (docs/DESIGN.md §5: one message to a worker carries every task its free slots can
 * take). The claims of one group commit are answered together, as one reply per claim; without
 * this, each reply would be its own write to the worker's IPC pipe, and each write a wake-up of
 * that process. The message goes out in the iteration's check phase (`setImmediate`), after every
 * reply that arrived with it has been handled.
 *
 * Attempts gathered for a worker whose process was replaced before the send (its pid changed) are
 * dropped: the dispatcher counted them lost when it saw the new pid, and they run again as
 * retries, not in the new process.
 */
export class RunOutbox {
  private readonly pending = new Map<WorkerSlot, { pid: number; items: WorkItem[]; oldestStart: number; after?: Array<() => void> }>();
  private scheduled = false;

  constructor(private readonly send: SendRun) {}

  /**
   * Queues `items` for `slot`'s next `run` message.
   * @param startedAt the earliest `startedAt` of their attempts (epoch ms)
   */
  add(slot: WorkerSlot, items: WorkItem[], startedAt: number): void {
    const queued = this.pending.get(slot);
    if (queued && queued.pid === slot.pid) {
      for (const i of items) queued.items.push(i);
      queued.oldestStart = Math.min(queued.oldestStart, startedAt);
    } else this.pending.set(slot, { pid: slot.pid, items: items.slice(), oldestStart: startedAt });
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  /**
   * Runs `tell` (a message about an attempt, such as an abort) once `slot`'s queued `run` message
   * is sent, at once when none is queued: a message sent at once would overtake the `run` that
   * starts its attempt (a cancel answered in the group commit of the attempt's claim), and the
   * worker, not knowing the attempt yet, would drop it; the handler then ran on, and its process
   * was killed, with every other attempt in it. Dropped with the run message when the worker's
   * process was replaced.
   */
  afterRuns(slot: WorkerSlot, tell: () => void): void {
    const queued = this.pending.get(slot);
    if (queued && queued.pid === slot.pid) (queued.after ??= []).push(tell);
    else tell();
  }

  /** Sends what is queued: one message per worker, then the messages held behind it ({@link afterRuns}). */
  flush(): void {
    this.scheduled = false;
    const batches = [...this.pending];
    this.pending.clear();
    for (const [slot, { pid, items, oldestStart, after }] of batches) {
      if (slot.pid !== pid) continue;
      this.send(slot, items, oldestStart);
      if (after) for (const tell of after) tell();
    }
  }
}

/** No attempt is late (shared, never written). */
const NONE_LATE: ReadonlySet<string> = new Set();

/**
 * Sends one `run` message to `slot` with the attempts gathered for it ({@link RunOutbox}), less
 * those that must no longer start (`lateAttempts`): checked just before the message goes out,
 * after the claim's own check (`lateClaims`), since a stall can also fall between the claim's
 * answer and the send. Those, and every attempt of a message that cannot reach its worker, go to
 * `finish` as lost (`worker_lost`), so they run again; a message the channel could not write (a
 * `RangeError` of its JSON) is sent again one attempt per message, so only the attempt at fault is. Outside cluster mode, while the lease of
 * the earliest start (`oldestStart`, epoch ms) still runs, none can be late and no attempt is
 * looked up (a herd's instant sends 100,000 of them).
 */
export function sendRun(
  deps: Pick<SchedulerDeps, 'clock' | 'config' | 'log' | 'cluster'>,
  running: RunningMap,
  slot: WorkerSlot,
  gathered: WorkItem[],
  oldestStart: number,
  finish: (results: FinishedAttempt[]) => void,
): void {
  const now = deps.clock.now();
  const late =
    !deps.cluster && now < oldestStart + deps.config.leaseMs
      ? NONE_LATE
      : lateAttempts(running, gathered, now, deps.config.leaseMs, deps.cluster?.fences);
  const items = late.size === 0 ? gathered : gathered.filter((i) => !late.has(i.id));
  if (late.size > 0) {
    // Gathered before a stall (SIGSTOP, a long pause) that outlasted their attempt lease or this
    // member's hold on their partition: not started here; recorded lost, so they run again.
    deps.log.warn(
      { count: late.size, worker_id: slot.id },
      'attempts whose lease or partition ended before their run message; not started',
    );
    slot.credits += late.size;
    finish([...late].map((id) => ({ id, attempt: running.get(id)?.task.attempt ?? 0, outcome: lostOutcome(), durationMs: 0 })));
    if (items.length === 0) return;
  }
  const send = (list: WorkItem[]): void =>
    slot.ref.tell('run', { tasks: list, pid: slot.pid }, (err) => {
      if (err instanceof RangeError && list.length > 1) {
        // One attempt's data the channel's JSON cannot write (nested too deep: an upstream result
        // stored before results were bounded), not the channel: the others go alone.
        for (const item of list) send([item]);
        return;
      }
      deps.log.warn({ err, worker_id: slot.id }, 'could not reach worker; its attempts are lost');
      finish(list.map((i) => ({ id: i.id, attempt: i.attempt, outcome: lostOutcome(), durationMs: 0 })));
    });
  send(items);
}
