import type { ActorContext } from '../runtime/comedy';
import { ReadyPolicy, ReadyQueues } from '../../domain/ready-queues';
import type { DueEntry } from '../../domain/task';
import type { WorkerPool, WorkerSlot } from './worker-pool';
import { PoolSpec } from './pool-specs';
import type { WorkerSlotView } from '../../observability/metrics';
import { takesWork, WorkerSelection } from './worker-selection';

/** What the dispatcher uses of one pool's {@link WorkerPool} (tests give a fake with these). */
export type PoolWorkers = Pick<WorkerPool, 'all' | 'get' | 'start' | 'kill' | 'unanswered' | 'stop' | 'disableRespawn' | 'killLeftovers'>;

/** One worker slot as `/metrics` and the dispatcher's `stats` show it. */
export type WorkerSnapshot = WorkerSlotView;

/**
 * One pool as the dispatcher runs it: its worker processes, the ready queues of its task types
 * (so a full pool holds up only its own types: other pools' tasks are queued and claimed apart),
 * and the selection of its workers.
 */
export class DispatchPool {
  private readonly selection = new WorkerSelection();

  constructor(
    readonly spec: PoolSpec,
    readonly workers: PoolWorkers,
    readonly ready: ReadyQueues,
  ) {}

  /**
   * Takes ready entries allowed to start at `now` for the free slots of the live workers and
   * splits each batch over them least loaded first ({@link WorkerSelection}); `claim` gets one
   * batch per worker (at most `batchMax` entries), whose credits are already taken.
   * @returns whether live workers still have free slots (the ready entries left cannot start yet)
   */
  fill(now: number, batchMax: number, claim: (slot: WorkerSlot, entries: DueEntry[]) => void): boolean {
    const slots = [...this.workers.all()];
    const room = () => slots.reduce((n, s) => n + (takesWork(s) ? Math.min(Math.max(0, s.credits), batchMax) : 0), 0);
    for (let free = room(); free > 0 && this.ready.size > 0; free = room()) {
      const entries = this.ready.take(free, now);
      if (entries.length === 0) return true;
      const counts = this.selection.split(slots, entries.length, batchMax);
      let at = 0;
      slots.forEach((slot, i) => {
        if (counts[i] === 0) return;
        slot.credits -= counts[i];
        claim(slot, entries.slice(at, (at += counts[i])));
      });
    }
    return room() > 0;
  }

  /** The pool's worker slots for `/metrics` and `stats`. */
  snapshot(): WorkerSnapshot[] {
    return [...this.workers.all()].map((w) => ({
      pool: this.spec.name,
      id: w.id,
      pid: w.pid,
      credits: w.credits,
      busy: w.pid !== 0 ? Math.max(0, this.spec.concurrency - w.credits) : 0,
      unanswered: w.pid !== 0 && w.unanswered,
    }));
  }
}

/**
 * The dispatcher's worker pools: the default pool and one per entry of `workerPools`. A ready
 * entry goes to the pool its task type is pinned to, else to the default pool; claims for a pool
 * are made only against its own workers' free slots. A concurrency key is shared by every pool:
 * a slot of a key freed in one pool also lets the entries set aside on that key in the others be
 * tried again.
 */
export class WorkerPools {
  private readonly pools: DispatchPool[];
  private readonly byType = new Map<string, DispatchPool>();

  /**
   * @param specs the pools, the default pool first (`poolSpecs`)
   * @param policy the ready queues' order and limits (one set of buckets and concurrency slots for all pools)
   * @param workersOf the worker processes of a pool (the dispatcher gives a {@link WorkerPool})
   */
  constructor(specs: readonly PoolSpec[], policy: ReadyPolicy, workersOf: (spec: PoolSpec) => PoolWorkers) {
    const shared = policy.concurrency;
    this.pools = specs.map((spec, index) => {
      const concurrency =
        shared && specs.length > 1
          ? {
              tryAcquire: (key: string, now: number) => shared.tryAcquire(key, now),
              release: (key: string, now: number) => {
                shared.release(key, now);
                this.pools.forEach((p, i) => i !== index && p.ready.reconsiderKey(key, 1));
              },
            }
          : shared;
      return new DispatchPool(spec, workersOf(spec), new ReadyQueues({ ...policy, concurrency }));
    });
    for (const pool of this.pools) for (const type of pool.spec.taskTypes) this.byType.set(type, pool);
  }

  /** Every pool, the default one first. */
  all(): readonly DispatchPool[] {
    return this.pools;
  }

  /** The pool that runs `taskType`. */
  poolOf(taskType: string): DispatchPool {
    return this.byType.get(taskType) ?? this.pools[0];
  }

  /** Ready entries waiting in all pools. */
  get readySize(): number {
    return this.pools.reduce((n, p) => n + p.ready.size, 0);
  }

  /** Ready entries per tenant, over all pools (metrics). */
  readyByTenant(): Map<string, number> {
    const out = new Map<string, number>();
    for (const p of this.pools) for (const t of p.ready.tenants()) out.set(t, (out.get(t) ?? 0) + p.ready.sizeOf(t));
    return out;
  }

  /** Puts back up to `n` entries set aside on `key` in every pool (its limit changed or slots arrived). */
  reconsiderKey(key: string, n: number): void {
    for (const p of this.pools) p.ready.reconsiderKey(key, n);
  }

  /** The worker slot with this id, in whichever pool. */
  get(workerId: string): WorkerSlot | undefined {
    for (const p of this.pools) {
      const slot = p.workers.get(workerId);
      if (slot) return slot;
    }
    return undefined;
  }

  /** `slot`'s process reported an attempt, so its loop turns: it takes work again if its last ping went unanswered. */
  answered(slot: WorkerSlot): void {
    if (slot.unanswered) this.pools.find((p) => p.workers.get(slot.id) === slot)?.workers.unanswered(slot, false);
  }

  /** Kills a worker process (see {@link WorkerPool.kill}) through the pool it belongs to. */
  kill(slot: WorkerSlot, reason: string): void {
    this.pools.find((p) => p.workers.get(slot.id) === slot)?.workers.kill(slot, reason);
  }

  /**
   * Starts every pool's workers, one pool after the other.
   * @throws DeadlineExceededError when a worker does not start within `workerStartTimeoutMs`
   */
  async start(parent: ActorContext): Promise<void> {
    for (const p of this.pools) await p.workers.start(parent);
  }

  /** Stops supervising every pool (see {@link WorkerPool.stop}). */
  stop(): void {
    for (const p of this.pools) p.workers.stop();
  }

  /** Switches comedy's respawn off in every pool (a drain). */
  disableRespawn(): void {
    for (const p of this.pools) p.workers.disableRespawn();
  }

  /** Kills worker processes still alive after the actor system was destroyed. */
  killLeftovers(): void {
    for (const p of this.pools) p.workers.killLeftovers();
  }

  /** Every worker slot of every pool. */
  snapshot(): WorkerSnapshot[] {
    return this.pools.flatMap((p) => p.snapshot());
  }
}
