import type { WorkerSlot } from './worker-pool';
import type { WorkItem } from '../protocol';

/** Sends one `run` message; `items` are the attempts it carries. */
export type SendRun = (slot: WorkerSlot, items: WorkItem[]) => void;

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
  private readonly pending = new Map<WorkerSlot, { pid: number; items: WorkItem[] }>();
  private scheduled = false;

  constructor(private readonly send: SendRun) {}

  /** Queues `items` for `slot`'s next `run` message. */
  add(slot: WorkerSlot, items: WorkItem[]): void {
    const queued = this.pending.get(slot);
    if (queued && queued.pid === slot.pid) for (const i of items) queued.items.push(i);
    else this.pending.set(slot, { pid: slot.pid, items: items.slice() });
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  /** Sends what is queued: one message per worker. */
  flush(): void {
    this.scheduled = false;
    const batches = [...this.pending];
    this.pending.clear();
    for (const [slot, { pid, items }] of batches) if (slot.pid === pid) this.send(slot, items);
  }
}
