/**
 * Partition ownership through leases (cluster mode, docs/DESIGN.md §4; docs/MONGODB.md "Partition leases
 * and fencing"). One instance per service process, run by the supervisor on the injected clock.
 *
 * Every round (each third of the lease TTL, and earlier when a lease it wants expires sooner):
 * 1. heartbeat this member (`expires_at = now + ttl`) and read the live members;
 * 2. compute the partitions this member should own: rendezvous hashing over the live members
 *    (domain/rendezvous.ts), so every node computes the same assignment without coordination;
 * 3. hand over: release the leases rendezvous now gives to another member (release, never
 *    steal: the new owner acquires once the lease is free, at its next round);
 * 4. renew the other held leases (compare-and-set on owner and epoch); a refused renewal means
 *    the lease was lost, and the partition's owner is stopped at once;
 * 5. acquire the wanted partitions whose lease is free or expired; each grant carries a new epoch,
 *    the tasks of the partition are fenced with it (`fencePartition`) before its owner starts.
 *    The fence runs beside the rounds, not inside one: a partition with many unfinished tasks
 *    can take a slow store longer than a TTL to fence, and meanwhile the next rounds renew the
 *    new lease like any other (a renewal is a compare-and-set on owner and epoch, so this takes
 *    nothing from safety). Until its fence is done the partition is held but not owned: no
 *    fencing token, no owner, not counted in `status().owned`.
 *
 * Safety: a held lease is dropped (owner stopped, fence revoked) when local time reaches
 * `sentAt + ttl − safetyMargin`, `sentAt` being the clock reading taken before the last successful
 * grant or renewal was sent. A timer armed at every renewal does it even when rounds stall (store
 * unreachable), and every round checks it first. The store never lets anyone else take the lease
 * before `sentAt + ttl` (a renewal never shortens it), so with clocks that agree within the margin
 * two members never fire one partition at once; the store-side fencing covers the rest (a member
 * paused between its check and its write).
 *
 * One process per member id: every heartbeat carries this process's instance token and is a
 * compare-and-set on it (`heartbeatMember`). A refused heartbeat means another process now holds
 * the id (it took over the record after this one went a TTL without heartbeating: frozen, cut
 * off): this process is fenced out. It drops every partition at once, stops its rounds, never
 * releases leases or removes the member record (they are the other process's now), and reports
 * not joined (`/readyz` 503) until it is restarted.
 *
 * Liveness: a member that dies stops heartbeating and renewing; its member record and leases
 * expire at most one TTL after its last round, and the survivors, whose rendezvous no longer
 * counts it, acquire its partitions at their next round. They also wake at the expiry instant of
 * another member's record (a live member's is always about a TTL ahead, a dead one's comes) and at
 * the expiry instant of a lease they want, so its partitions move about one lease TTL after its
 * last round, not one more round later.
 */
import { BusAgreement } from './bus-agreement';
import type { TimerHandle } from '../domain/clock';
import { StoreUnavailableError } from '../domain/errors';
import { partitionsFor } from '../domain/rendezvous';
import type { MemberRecord } from '../storage/cluster-store';
import { newInstanceToken } from './member-claim';
import type { OwnershipEnd, OwnershipStatus, PartitionLeasesOptions } from './ownership';

interface Held {
  epoch: number;
  /** Local time at which the owner must have stopped (sentAt + ttl − margin). */
  deadline: number;
  timer: TimerHandle | null;
  /** False while the grant's fence runs: the lease is renewed, no owner runs, no token is handed out. */
  fenced: boolean;
}

/**
 * Acquires, renews, hands over and drops this member's partition leases (see the file header).
 * Not an actor: a class with one timer on the injected clock; rounds never overlap.
 */
export class PartitionLeases {
  private readonly held = new Map<number, Held>();
  private readonly intervalMs: number;
  private readonly marginMs: number;
  private timer: TimerHandle | null = null;
  private running: Promise<void> | null = null;
  /** Fences of new grants still running (see `fence`). */
  private readonly fencing = new Set<Promise<void>>();
  private nextDelayMs: number;
  /** Local time at which another member's record expires (the next round runs then if sooner). */
  private wakeAt = Infinity;
  private stopped = true;
  private joined = false;
  private liveMembers = 0;
  private readonly instance: string;
  /** Another process holds the member id now: no more rounds, nothing owned. */
  private fencedOut = false;
  /** A round was asked for while one ran: another runs right after it (`roundSoon`). */
  private rerun = false;
  /** Compares the live members' buses with this one's at each round (option `bus`). */
  private readonly buses: BusAgreement | null;

  /** @throws RangeError when the safety margin leaves no time between renewals */
  constructor(private readonly o: PartitionLeasesOptions) {
    this.intervalMs = Math.max(1, Math.floor(o.ttlMs / 3));
    this.marginMs = o.safetyMarginMs ?? Math.floor(o.ttlMs / 5);
    if (this.marginMs < 0 || this.marginMs >= o.ttlMs - this.intervalMs) {
      throw new RangeError(`safetyMarginMs must be in [0, ${o.ttlMs - this.intervalMs}) for ttlMs ${o.ttlMs}`);
    }
    this.nextDelayMs = this.intervalMs;
    this.instance = o.instance ?? newInstanceToken();
    const metrics = o.metrics;
    this.buses = o.bus
      ? new BusAgreement(o.memberId, o.bus, { ...(o.log ? { log: o.log } : {}), gauge: (n) => metrics?.otherBus?.(n) })
      : null;
  }

  /**
   * Joins: runs the first round (heartbeat, acquire free wanted partitions) and waits for the
   * fences of its grants; then a round runs every ttl/3.
   */
  async start(): Promise<void> {
    if (!this.stopped) return;
    this.stopped = false;
    await this.round();
    await Promise.all(this.fencing);
  }

  /**
   * Leaves: stops the rounds, stops every owner (`shutdown`), releases the held leases, removes
   * this member and tells the others (`events.left`: they run a round at once instead of at their
   * next). Store errors are logged, not thrown (the leases then expire on their own).
   */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) this.o.clock.clearTimeout(this.timer);
    this.timer = null;
    await this.running;
    await Promise.all(this.fencing);
    const held = [...this.held.entries()];
    for (const [p] of held) this.drop(p, 'shutdown');
    if (this.fencedOut) return; // the leases and the member record are the other process's
    const { store, memberId } = this.o;
    await Promise.all(
      held.map(([p, h]) => store.releaseLease(p, memberId, h.epoch).catch((err) => this.warn(err, 'lease release failed'))),
    );
    await store.removeMember(memberId, this.instance).catch((err) => this.warn(err, 'leaving the member list failed'));
    this.joined = false;
    this.o.events.left?.();
  }

  status(): OwnershipStatus {
    return {
      memberId: this.o.memberId,
      joined: this.joined,
      owned: this.partitionsWhere(true),
      fencing: this.partitionsWhere(false),
      partitions: this.o.partitions,
      liveMembers: this.liveMembers,
      fencedOut: this.fencedOut,
    };
  }

  /**
   * Runs a round now unless one is running; resolves when it has finished (tests drive rounds
   * with a manual clock and wait for them with this).
   */
  round(): Promise<void> {
    if (this.stopped || this.fencedOut) return Promise.resolve();
    if (this.running) return this.running;
    if (this.timer) this.o.clock.clearTimeout(this.timer);
    this.timer = null;
    this.running = this.roundOnce()
      .catch((err) => this.warn(err, 'partition lease round failed'))
      .finally(() => {
        this.running = null;
        this.schedule();
      });
    return this.running;
  }

  /**
   * A round that starts after this call: now, or right after the one running (whose member list may
   * predate the news). For another member's leaving (the `left` message of the coordination bus).
   */
  roundSoon(): Promise<void> {
    if (this.running) {
      this.rerun = true;
      return this.running;
    }
    return this.round();
  }

  /** Resolves when no round and no fence is running (tests). */
  async settled(): Promise<void> {
    while (this.running || this.fencing.size > 0) {
      await this.running;
      await Promise.all(this.fencing);
    }
  }

  private partitionsWhere(fenced: boolean): number[] {
    return [...this.held.entries()]
      .filter(([, h]) => h.fenced === fenced)
      .map(([p]) => p)
      .sort((a, b) => a - b);
  }

  private schedule(): void {
    if (this.stopped || this.fencedOut) return;
    const delay = this.rerun ? 1 : Math.max(1, Math.min(this.nextDelayMs, this.wakeAt - this.o.clock.now()));
    this.rerun = false;
    this.timer = this.o.clock.setTimeout(() => {
      this.timer = null;
      void this.round();
    }, delay);
  }

  private async roundOnce(): Promise<void> {
    const { store, clock, memberId, partitions, ttlMs } = this.o;
    this.dropOverdue();
    this.nextDelayMs = this.intervalMs;
    this.wakeAt = Infinity;
    let wanted: Set<number> | null = null;
    try {
      const now = clock.now();
      const beat = await store.heartbeatMember(
        { memberId, address: this.o.address ?? null, instance: this.instance, bus: this.o.bus ?? null },
        now,
        ttlMs,
      );
      if (!beat.held) {
        this.fenceOut(beat.holder);
        return;
      }
      const live = await store.listLiveMembers(now);
      this.buses?.see(live);
      const members = live.map((m) => m.memberId);
      this.liveMembers = new Set([...members, memberId]).size;
      // Wake when another member's record expires, if before the next round: a dead member's
      // partitions become wanted then (its leases expire a moment later; see acquireWanted).
      this.wakeAt = Math.min(...live.filter((m) => m.memberId !== memberId).map((m) => m.expiresAt + 1));
      wanted = new Set(partitionsFor(memberId, members, partitions));
    } catch (err) {
      // Without a member list, keep what is held (renewals below) and change nothing else.
      this.warn(err, 'member heartbeat failed');
    }
    if (this.stopped) return;
    const released = wanted ? await this.handOver(wanted) : 0;
    await Promise.all([...this.held.entries()].map(([p, h]) => this.renew(p, h)));
    if (wanted && !this.stopped) await this.acquireWanted(wanted);
    this.o.metrics?.owned(this.partitionsWhere(true).length);
    if (!wanted || this.stopped) return;
    const joinedNow = !this.joined;
    this.joined = true;
    if (joinedNow || released > 0) this.o.events.changed?.();
  }

  /**
   * Another process holds this member id: drop everything (fences revoked, owners stopped) and
   * stop taking part. Leases are left to expire or to the other process (same owner name: it
   * gives them back and takes them anew with new epochs, which fences this one's writes).
   */
  private fenceOut(holder: MemberRecord): void {
    this.fencedOut = true;
    this.joined = false;
    this.o.log?.error(
      { member_id: this.o.memberId, instance: this.instance, holder_instance: holder.instance, holder_address: holder.address },
      'member id taken over by another process: this process is fenced out and owns no partition until restarted',
    );
    for (const p of [...this.held.keys()]) this.drop(p, 'lost');
    this.o.metrics?.owned(0);
  }

  /**
   * Releases the held partitions that rendezvous gives to another member (stop first, then release).
   * @returns how many were released
   */
  private async handOver(wanted: Set<number>): Promise<number> {
    const { store, memberId } = this.o;
    const leaving = [...this.held.entries()].filter(([p]) => !wanted.has(p));
    for (const [p] of leaving) this.drop(p, 'handed_over');
    await Promise.all(
      leaving.map(([p, h]) => store.releaseLease(p, memberId, h.epoch).catch((err) => this.warn(err, 'lease release failed'))),
    );
    return leaving.length;
  }

  private async renew(partition: number, h: Held): Promise<void> {
    const { store, clock, memberId, ttlMs } = this.o;
    const sentAt = clock.now();
    try {
      const lease = await store.renewLease(partition, memberId, h.epoch, sentAt, ttlMs);
      if (this.held.get(partition) !== h) return; // dropped meanwhile
      if (!lease) {
        this.drop(partition, 'lost');
        return;
      }
      this.o.metrics?.renewed();
      this.arm(partition, h, sentAt);
    } catch (err) {
      // Unknown outcome: keep the partition until its deadline (the timer stops it then).
      this.warn(err, 'lease renewal failed');
    }
  }

  /** Acquires the wanted partitions whose lease is free or expired. */
  private async acquireWanted(wanted: Set<number>): Promise<void> {
    const { store, clock, memberId } = this.o;
    const leases = new Map((await store.listLeases()).map((l) => [l.partition, l]));
    const now = clock.now();
    const free: number[] = [];
    let nextExpiry = Infinity;
    for (const p of wanted) {
      if (this.held.has(p)) continue;
      const l = leases.get(p);
      if (!l || l.expiresAt <= now) free.push(p);
      else if (l.owner === memberId) {
        // Granted to us by a call whose answer was lost: give it back and take it anew.
        await store.releaseLease(p, memberId, l.epoch).catch((err) => this.warn(err, 'lease release failed'));
        free.push(p);
      } else nextExpiry = Math.min(nextExpiry, l.expiresAt);
    }
    await Promise.all(free.map((p) => this.acquire(p)));
    // Wake when a wanted lease held by another (dead?) member expires, if before the next round.
    if (nextExpiry !== Infinity) this.nextDelayMs = Math.max(1, Math.min(this.intervalMs, nextExpiry - clock.now() + 1));
  }

  /** Asks for the lease of `partition`; a grant is held at once and fenced beside the rounds. */
  private async acquire(partition: number): Promise<void> {
    const { store, clock, memberId, ttlMs } = this.o;
    const sentAt = clock.now();
    try {
      const grant = await store.acquireLease(partition, memberId, sentAt, ttlMs);
      if (!grant.granted) return;
      const h: Held = { epoch: grant.lease.epoch, deadline: 0, timer: null, fenced: false };
      if (this.stopped) {
        await store.releaseLease(partition, memberId, h.epoch).catch(() => undefined);
        return;
      }
      this.held.set(partition, h);
      this.arm(partition, h, sentAt);
      const fencing = this.fence(partition, h)
        .catch((err) => this.warn(err, 'starting the owner of a fenced partition failed'))
        .finally(() => this.fencing.delete(fencing));
      this.fencing.add(fencing);
    } catch (err) {
      this.warn(err, 'lease acquisition failed');
    }
  }

  /**
   * Fences the tasks of a new grant with its epoch, then, if the lease is still held (renewals
   * kept it; nothing dropped it meanwhile), hands out the token and starts the owner. A failed
   * fence gives the lease back.
   */
  private async fence(partition: number, h: Held): Promise<void> {
    const { store, memberId } = this.o;
    try {
      await store.fencePartition(partition, h.epoch);
    } catch (err) {
      this.warn(err, 'fencing a new partition failed; giving the lease back');
      if (this.held.get(partition) !== h) return;
      this.drop(partition, 'handed_over');
      await store.releaseLease(partition, memberId, h.epoch).catch(() => undefined);
      return;
    }
    if (this.held.get(partition) !== h || this.stopped) return; // dropped meanwhile: stop() or a round releases it
    if (this.o.clock.now() >= h.deadline) {
      this.drop(partition, 'expired'); // no renewal got through while it fenced
      return;
    }
    h.fenced = true;
    this.o.fences.grant(partition, h.epoch);
    this.o.metrics?.acquired();
    this.o.metrics?.owned(this.partitionsWhere(true).length);
    this.o.events.acquired(partition, h.epoch);
  }

  /** Sets the deadline of a held lease from the instant its grant or renewal was sent. */
  private arm(partition: number, h: Held, sentAt: number): void {
    const { clock, ttlMs } = this.o;
    h.deadline = sentAt + ttlMs - this.marginMs;
    if (h.timer) clock.clearTimeout(h.timer);
    h.timer = clock.setTimeout(() => {
      h.timer = null;
      if (this.held.get(partition) === h) this.drop(partition, 'expired');
    }, h.deadline - clock.now());
  }

  private dropOverdue(): void {
    const now = this.o.clock.now();
    for (const [p, h] of [...this.held.entries()]) if (now >= h.deadline) this.drop(p, 'expired');
  }

  /**
   * Forgets a held partition: fence revoked first (no more firing or claiming), then the owner
   * stopped. A partition still being fenced has neither token nor owner: it is only forgotten.
   */
  private drop(partition: number, why: OwnershipEnd): void {
    const h = this.held.get(partition);
    if (!h) return;
    this.held.delete(partition);
    if (h.timer) this.o.clock.clearTimeout(h.timer);
    if (why === 'lost' || why === 'expired')
      this.warn({ partition, epoch: h.epoch, why, fenced: h.fenced }, 'partition lease lost; its owner stops');
    this.o.metrics?.ended(why);
    if (!h.fenced) return;
    // Given up by plan (a hand-over, a graceful stop), not lost: attempts claimed with its epoch still start.
    this.o.fences.revoke(partition, why === 'handed_over' || why === 'shutdown');
    this.o.metrics?.owned(this.partitionsWhere(true).length);
    this.o.events.stopped(partition, h.epoch, why);
  }

  /** Logs a failed step; a store fault is not (the store's health logs it once, and every round would repeat it). */
  private warn(err: unknown, msg: string): void {
    if (err instanceof StoreUnavailableError) return;
    this.o.log?.warn(err instanceof Error ? { err } : (err as object), msg);
  }
}
