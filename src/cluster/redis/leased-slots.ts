import type { Clock, TimerHandle } from '../../domain/clock';
import type { SharedSlots } from '../../domain/concurrency-limits';

/** Where a {@link LeasedSlots} gets its slots: the slot set of one concurrency key (Redis). */
export interface SlotSource {
  /** False while the source is known to be unreachable (no request is then made). */
  readonly up: boolean;
  /**
   * Leases up to `wanted` slots under `limit`, with ids `<holder>:1` … `<holder>:<granted>`.
   * @returns how many were granted (0..wanted). Rejects when unreachable.
   */
  acquire(limit: number, wanted: number, holder: string): Promise<number>;
  /** Renews the leases `keep` and gives back `release`. @returns the ids of `keep` that were lost (expired). */
  renew(keep: string[], release: string[]): Promise<string[]>;
}

/** Lease tuning; durations in ms. */
export interface SlotLeaseOptions {
  /** A lease lasts this long unless renewed: a crashed node's slots come back after it. */
  ttlMs: number;
  /** Held leases are renewed this often (well under `ttlMs`). */
  renewMs: number;
  /** A slot left free this long is given back to the other nodes. */
  idleMs: number;
  /** After an empty grant, asked again this often while tasks of the key wait here. */
  pollMs: number;
  /** After a failed request, the per-node limit decides for this long before Redis is tried again. */
  retryAfterMs: number;
  /** Most slots asked for at once. */
  batch: number;
}

/** What a {@link LeasedSlots} reports (metrics). */
export interface SlotEvents {
  lease(result: 'granted' | 'empty' | 'failed'): void;
  fallback(): void;
}

/**
 * The {@link SharedSlots} of one concurrency key in cluster mode: slots leased from a set in
 * Redis shared by every node (`acquire-slots.lua`, `renew-slots.lua`), spent synchronously by the
 * dispatcher, like a `LeasedBucket`'s tokens. A start takes a free slot this node holds; with none
 * free it asks for more (one request at a time) and answers false meanwhile; the reply calls
 * `wake` so the tasks set aside on the key are tried again (an empty reply asks again after
 * `pollMs`). An ended attempt's slot stays with the node for `idleMs` (the next task of the key
 * takes it without a round trip), then goes back. Held leases are renewed every `renewMs`; a
 * node that dies or loses Redis for `ttlMs` loses them, and a lease once expired is never renewed
 * (fencing), so the set never holds more than the limit. Bound: the cluster runs at most the
 * limit at once, except when a node cut off from Redis for longer than `ttlMs` keeps running
 * attempts whose leases expired, or the server lost the set (a restart without data, a
 * FLUSHALL): the node counts them as unbacked and asks for slots for them again at once
 * ({@link reback}), so the overrun lasts only while the set is already full with others' slots.
 *
 * While the source is down (or for `retryAfterMs` after a failed request) starts are allowed
 * without a lease, counted in `fallback`: the caller's per-node count then caps them (the limit
 * holds per node).
 */
export class LeasedSlots implements SharedSlots {
  private held: string[] = [];
  /** Held slots backing attempts that run. */
  private inUse = 0;
  /** Attempts started without a lease (Redis down), or whose lease was lost. */
  private unbacked = 0;
  private inFlight = false;
  private localUntil = 0;
  private counter = 0;
  private renewTimer: TimerHandle | null = null;
  private idleTimer: TimerHandle | null = null;
  private pollTimer: TimerHandle | null = null;
  private closed = false;

  /**
   * @param limit the key's limit (cluster-wide)
   * @param nodeId this node's id (lease ids start with it)
   * @param wake called when slots arrived or may have (the dispatcher tries the key again)
   */
  constructor(
    private limit: number,
    private readonly nodeId: string,
    private readonly source: SlotSource,
    private readonly clock: Clock,
    private readonly options: SlotLeaseOptions,
    private readonly wake: () => void,
    private readonly events?: SlotEvents,
  ) {}

  /** Slots this node holds (tests, metrics). */
  get leased(): number {
    return this.held.length;
  }

  tryTake(now: number): boolean {
    if (this.closed) return false;
    if (this.useLocal(now)) {
      this.unbacked++;
      this.events?.fallback();
      return true;
    }
    if (this.inUse < this.held.length) {
      this.inUse++;
      return true;
    }
    this.request();
    return false;
  }

  giveBack(): void {
    if (this.unbacked > 0) this.unbacked--;
    else if (this.inUse > 0) this.inUse--;
    if (this.held.length > this.inUse && !this.idleTimer && !this.closed) {
      this.idleTimer = this.clock.setTimeout(() => {
        this.idleTimer = null;
        this.sync(true);
      }, this.options.idleMs);
    }
  }

  /** A changed limit of the same key: slots held above a lowered one go back as their attempts end. */
  setLimit(maxRunning: number): void {
    this.limit = maxRunning;
  }

  close(): void {
    this.closed = true;
    for (const t of [this.renewTimer, this.idleTimer, this.pollTimer]) if (t) this.clock.clearTimeout(t);
    this.renewTimer = this.idleTimer = this.pollTimer = null;
    const release = this.held;
    this.held = [];
    this.inUse = 0;
    if (release.length > 0) void this.source.renew([], release).catch(() => undefined);
  }

  private useLocal(now: number): boolean {
    return !this.source.up || now < this.localUntil;
  }

  /**
   * Asks for slots again for the attempts running here without one (started while Redis was
   * away, or whose leases the server lost: a restart without data, a FLUSHALL), so that the set
   * counts them again and the other nodes take only what is left of the limit. Called when the
   * connection comes back; best effort (a set already full leaves them unbacked until they end).
   */
  reback(): void {
    if (this.unbacked > 0 && !this.closed) this.request();
  }

  /**
   * One acquire at a time, and none while an empty grant's poll (`pollMs`) waits: the dispatcher
   * tries a key at its limit on every pass, and each try asked Redis again at once (thousands of
   * scripts a second per key).
   */
  private request(): void {
    if (this.inFlight || this.pollTimer || !this.source.up) return;
    this.inFlight = true;
    const holder = `${this.nodeId}:${++this.counter}`;
    const wanted = Math.max(1, Math.min(Math.max(this.options.batch, this.unbacked), this.limit));
    this.source.acquire(this.limit, wanted, holder).then(
      (granted) => {
        this.inFlight = false;
        for (let i = 1; i <= granted; i++) this.held.push(`${holder}:${i}`);
        if (this.closed) return this.close();
        this.events?.lease(granted > 0 ? 'granted' : 'empty');
        // Attempts running without a slot take the granted ones first.
        const backed = Math.min(this.unbacked, this.held.length - this.inUse);
        this.unbacked -= backed;
        this.inUse += backed;
        if (granted > 0) {
          this.armRenew();
          this.wake();
        } else {
          this.pollTimer = this.clock.setTimeout(() => {
            this.pollTimer = null;
            this.wake();
          }, this.options.pollMs);
        }
      },
      () => {
        this.inFlight = false;
        this.localUntil = this.clock.now() + this.options.retryAfterMs;
        this.events?.lease('failed');
        this.wake();
      },
    );
  }

  private armRenew(): void {
    if (this.renewTimer || this.closed) return;
    this.renewTimer = this.clock.setTimeout(() => {
      this.renewTimer = null;
      this.sync(false);
    }, this.options.renewMs);
  }

  /**
   * Renews the held leases and gives back the free ones above what runs (all free ones when
   * `idle`; otherwise those above a lowered limit). Lost leases are dropped: attempts they backed
   * count as unbacked.
   */
  private sync(idle: boolean): void {
    if (this.closed) return;
    const keepCount = idle ? this.inUse : Math.min(this.held.length, Math.max(this.inUse, this.limit));
    const keep = this.held.slice(0, keepCount);
    const release = this.held.slice(keepCount);
    this.held = keep;
    if (keep.length === 0 && release.length === 0) return;
    this.source.renew(keep, release).then(
      (lost) => {
        if (lost.length > 0) {
          const gone = new Set(lost);
          this.held = this.held.filter((id) => !gone.has(id));
          if (this.inUse > this.held.length) {
            this.unbacked += this.inUse - this.held.length;
            this.inUse = this.held.length;
          }
          this.reback();
        }
        if (this.held.length > 0) this.armRenew();
        if (release.length > 0 || lost.length > 0) this.wake();
      },
      () => {
        // Unreachable: keep the ids (renewal is tried again); they expire on the server if it stays so.
        if (this.held.length > 0) this.armRenew();
      },
    );
  }
}
