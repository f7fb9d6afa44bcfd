import { SmoothWeightedRoundRobin } from './smooth-weighted-round-robin';
import { DueEntry, PRIORITY_RANK } from './task';
import { TenantReadyQueue } from './tenant-ready-queue';
import type { RateBucket } from './rate-limiter-backend';
import { KeySetAside } from './key-set-aside';

/** Inside a tenant, without aging: high before medium before low, then oldest due, then sequence. */
export function compareReady(a: DueEntry, b: DueEntry): number {
  return PRIORITY_RANK[a.priority] - PRIORITY_RANK[b.priority] || a.dueAt - b.dueAt || a.seq - b.seq;
}

/** What decides the order and the pace of starts. Every part is optional. */
export interface ReadyPolicy {
  /** Tenant weight for the weighted round-robin (> 0; default 1). */
  weightOf?(tenantId: string): number;
  /** A task waiting this long (ms since due) competes as `high` (default: never). */
  agingMs?: number;
  /** The token bucket limiting starts of a task type, or null for none. */
  typeBucket?(taskType: string): RateBucket | null;
  /** The token bucket limiting starts of a tenant's tasks, or null for none. */
  tenantBucket?(tenantId: string): RateBucket | null;
  /** Called when a queue with work finds its bucket empty (a rate-limit wait begins). */
  onWait?(kind: 'task_type' | 'tenant', key: string): void;
  /**
   * The concurrency slots of tasks with a `concurrencyKey` (`ConcurrencyLimits`): a slot is taken
   * for each such entry {@link ReadyQueues.take} returns, and given back by {@link ReadyQueues.refund}
   * or {@link ReadyQueues.releaseKey}.
   */
  concurrency?: { tryAcquire(key: string, now: number): boolean; release(key: string, now: number): void };
}

/**
 * The dispatcher's ready tasks (docs/DESIGN.md §5): per tenant a {@link TenantReadyQueue} (priority with
 * aging, per task type), smooth weighted round-robin between tenants that have work allowed to
 * start, and token buckets per task type and per tenant. An empty bucket parks only its own queue:
 * other types and tenants keep flowing, and {@link nextReleaseAt} says when to look again (the
 * caller sets one timer; nothing polls). Tenants without work hold no state. An entry whose
 * concurrency key is full when it comes up is set aside per key (so it holds up nothing behind
 * it) and comes back when a slot of its key frees ({@link releaseKey}, {@link reconsiderKey}).
 */
export class ReadyQueues {
  private readonly byTenant = new Map<string, TenantReadyQueue>();
  /** Per task id, its entry held here (queued, or set aside on its concurrency key). */
  private readonly ids = new Map<string, DueEntry>();
  /** The held entries that are in their tenant's queue (not set aside). */
  private readonly queued = new WeakSet<DueEntry>();
  private readonly rr: SmoothWeightedRoundRobin;
  private readonly agingMs: number;
  /** Keys currently waiting on an empty bucket (so a wait is counted once, when it begins). */
  private readonly waiting = new Set<string>();
  /** The buckets {@link take} charged for each entry it returned, for {@link refund}. */
  private readonly charged = new WeakMap<DueEntry, RateBucket[]>();
  /** Entries whose concurrency key was full when they came up, per key. */
  private readonly aside = new KeySetAside(compareReady);

  constructor(private readonly policy: ReadyPolicy = {}) {
    this.rr = new SmoothWeightedRoundRobin(policy.weightOf);
    this.agingMs = policy.agingMs ?? Infinity;
  }

  get size(): number {
    return this.ids.size;
  }

  /** Entries queued for one tenant (metrics). */
  sizeOf(tenantId: string): number {
    return this.byTenant.get(tenantId)?.size ?? 0;
  }

  /** Tenants with queued entries. */
  tenants(): IterableIterator<string> {
    return this.byTenant.keys();
  }

  /** Entries set aside because their concurrency key was full. */
  get setAside(): number {
    return this.aside.size;
  }

  /**
   * Adds an entry. A second add of the same id is ignored, unless it brings a new priority or due
   * time (a `PATCH` of a task waiting here): then it takes the place of the one queued, which is
   * dropped. An entry set aside on its concurrency key is kept as it is, as is one whose tenant or
   * task type differs (not the same task).
   */
  add(entry: DueEntry): void {
    const held = this.ids.get(entry.id);
    if (held) {
      const same = held.priority === entry.priority && held.dueAt === entry.dueAt;
      if (same || !this.queued.has(held) || held.tenantId !== entry.tenantId || held.taskType !== entry.taskType) return;
      this.queued.delete(held);
      this.byTenant.get(held.tenantId)?.supersede(held);
    }
    this.ids.set(entry.id, entry);
    this.queue(entry);
  }

  private queue(entry: DueEntry): void {
    let q = this.byTenant.get(entry.tenantId);
    if (!q) {
      q = new TenantReadyQueue();
      this.byTenant.set(entry.tenantId, q);
    }
    q.add(entry);
    this.queued.add(entry);
  }

  /**
   * Removes and returns up to `n` entries allowed to start at `now` (epoch ms), tenant by tenant in
   * weighted turn, taking one token from each bucket that applies.
   */
  take(n: number, now: number): DueEntry[] {
    const out: DueEntry[] = [];
    // Each tenant's next allowed entry, computed once and then kept current: only the tenant just
    // served changes, unless a bucket just ran dry (then every head is looked at again).
    let candidates = this.heads(now);
    while (out.length < n && candidates.size > 0) {
      const tenant = this.rr.pick(candidates.keys()) as string;
      const e = candidates.get(tenant) as DueEntry;
      const key = e.concurrencyKey;
      if (key !== undefined && this.policy.concurrency && !this.policy.concurrency.tryAcquire(key, now)) {
        this.dequeue(tenant, e);
        this.aside.add(key, e);
        this.nextHead(candidates, tenant, now);
        continue;
      }
      const typeBucket = this.policy.typeBucket?.(e.taskType) ?? null;
      const tenantBucket = this.policy.tenantBucket?.(tenant) ?? null;
      const charged: RateBucket[] = [];
      if (typeBucket?.tryTake(now)) charged.push(typeBucket);
      if (tenantBucket?.tryTake(now)) charged.push(tenantBucket);
      if (charged.length > 0) this.charged.set(e, charged);
      this.dequeue(tenant, e);
      this.ids.delete(e.id);
      out.push(e);
      if (typeBucket && typeBucket.nextTokenAt(now) > now) {
        candidates = this.heads(now);
        continue;
      }
      this.nextHead(candidates, tenant, now);
    }
    return out;
  }

  /** Removes `e` (its tenant's head) from its tenant queue; the entry stays known by id. */
  private dequeue(tenant: string, e: DueEntry): void {
    const q = this.byTenant.get(tenant) as TenantReadyQueue;
    q.remove(e);
    this.queued.delete(e);
    if (q.size === 0) {
      this.byTenant.delete(tenant);
      this.rr.forget(tenant);
    }
  }

  /** Puts the tenant's next allowed entry into `candidates` (or drops the tenant). */
  private nextHead(candidates: Map<string, DueEntry>, tenant: string, now: number): void {
    const q = this.byTenant.get(tenant);
    const head = q && this.tenantMayStart(tenant, now) ? q.peek(now, this.agingMs, (type) => this.typeMayStart(type, now)) : undefined;
    if (head) candidates.set(tenant, head);
    else candidates.delete(tenant);
  }

  /**
   * The attempt of an entry {@link take} returned with a concurrency key has ended: its slot is
   * given back and the best entry set aside on that key returns to its tenant's queue.
   * @param now epoch ms on the scheduler's clock
   */
  releaseKey(key: string, now: number): void {
    this.policy.concurrency?.release(key, now);
    this.reconsiderKey(key, 1);
  }

  /**
   * Puts back up to `n` entries set aside on `key` (best first) into their tenants' queues: a
   * slot freed, the key's limit changed, or shared slots arrived. They are tried again by the
   * next {@link take}, and set aside again if the key is still full.
   */
  reconsiderKey(key: string, n = Infinity): void {
    for (const e of this.aside.take(key, n)) this.queue(e);
  }

  /**
   * Gives back the tokens {@link take} took for `entries` (the entry objects it returned) whose
   * start did not happen (their claim was refused: cancelled, rescheduled or already claimed
   * meanwhile), so a task that never runs does not use up a rate limit. Each token goes back to
   * the bucket it came from, once, even if the limits changed since.
   * @param now epoch ms on the scheduler's clock
   */
  refund(entries: readonly DueEntry[], now: number): void {
    for (const e of entries) {
      for (const bucket of this.charged.get(e) ?? []) bucket.refund(now);
      this.charged.delete(e);
      if (e.concurrencyKey !== undefined) this.releaseKey(e.concurrencyKey, now);
    }
  }

  /** The next entry each tenant may start now (tenants parked by a bucket are left out). */
  private heads(now: number): Map<string, DueEntry> {
    const heads = new Map<string, DueEntry>();
    for (const [tenant, q] of this.byTenant) {
      if (!this.tenantMayStart(tenant, now)) continue;
      const head = q.peek(now, this.agingMs, (type) => this.typeMayStart(type, now));
      if (head) heads.set(tenant, head);
    }
    return heads;
  }

  /**
   * When a queue parked on an empty bucket can start again (epoch ms), or null when no queued
   * work waits on a bucket.
   */
  nextReleaseAt(now: number): number | null {
    let at = Infinity;
    const consider = (bucket: RateBucket | null | undefined) => {
      const next = bucket ? bucket.nextTokenAt(now) : now;
      if (next > now) at = Math.min(at, next);
    };
    for (const [tenant, q] of this.byTenant) {
      consider(this.policy.tenantBucket?.(tenant));
      for (const type of q.taskTypes()) consider(this.policy.typeBucket?.(type));
    }
    return at === Infinity ? null : at;
  }

  private tenantMayStart(tenant: string, now: number): boolean {
    return this.mayStart('tenant', tenant, this.policy.tenantBucket?.(tenant) ?? null, now);
  }

  private typeMayStart(type: string, now: number): boolean {
    return this.mayStart('task_type', type, this.policy.typeBucket?.(type) ?? null, now);
  }

  private mayStart(kind: 'task_type' | 'tenant', key: string, bucket: RateBucket | null, now: number): boolean {
    if (!bucket || bucket.nextTokenAt(now) <= now) {
      this.waiting.delete(`${kind}:${key}`);
      return true;
    }
    const k = `${kind}:${key}`;
    if (!this.waiting.has(k)) {
      this.waiting.add(k);
      this.policy.onWait?.(kind, key);
    }
    return false;
  }
}
