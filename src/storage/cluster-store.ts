/**
 * The cluster part of the {@link Store} contract (docs/CLUSTER.md): members (live service processes) and
 * partition leases with fencing epochs, and the fence itself on the tasks of a partition. The
 * conformance suite (test/storage/conformance/cluster.ts, fencing.ts) checks it on every adapter.
 *
 * Rules (docs/MONGODB.md, "Partition leases and fencing"):
 * - Expiry is judged by comparing `expiresAt` with the `now` passed in, never by the server's
 *   clock nor by a TTL index having deleted something. A record with `expiresAt <= now` is expired.
 * - A partition's epoch only grows: every grant is `previous epoch + 1` (the first is 1), and a
 *   lease record is never deleted (it stays, expired, after a release), so a fencing token is
 *   never handed out twice for one partition.
 */

/** A service process that takes part in partition ownership. */
export interface MemberRecord {
  memberId: string;
  /** Where it can be reached (informational: logs, diagnostics); null when not given. */
  address: string | null;
  /** Last heartbeat (epoch ms, the member's `now`). */
  heartbeatAt: number;
  /** Live while `expiresAt > now` (epoch ms). */
  expiresAt: number;
  /**
   * Token of the process that holds the member id (random per process start); null in a record
   * written before tokens existed. Two processes configured with one id are told apart by it.
   */
  instance: string | null;
  /**
   * The bus the member sends and hears its peers on (`redis`, `postgres`, `none`; see
   * `cluster/bus-kind.ts`), as its last heartbeat said; null in a record written before buses were
   * recorded, or by a caller that did not say. Members on different buses miss each other's
   * wake-ups, cancels and pull demands: each member compares (`partition-leases.ts`).
   */
  bus: string | null;
}

/** What a member's heartbeat writes (see {@link ClusterStore.heartbeatMember}). */
export interface MemberBeat {
  memberId: string;
  /** Where it can be reached (informational); null or absent: none. */
  address?: string | null;
  /** Token of the process holding the member id (random per process start). */
  instance: string;
  /** Its bus (see {@link MemberRecord.bus}); null or absent: not said. */
  bus?: string | null;
}

/** Answer of {@link ClusterStore.heartbeatMember}. */
export type MemberHeartbeat =
  | { held: true; member: MemberRecord }
  /** Another process instance holds the member id and its record is live: nothing was written. */
  | { held: false; holder: MemberRecord };

/** The lease of one partition. */
export interface PartitionLease {
  partition: number;
  /** Member that holds (or last held) it. */
  owner: string;
  /** Fencing token: grows by one with every grant. */
  epoch: number;
  /** Held while `expiresAt > now` (epoch ms); a released lease has `expiresAt` 0. */
  expiresAt: number;
}

/** Answer of {@link ClusterStore.acquireLease}. */
export type LeaseGrant =
  | { granted: true; lease: PartitionLease }
  /** Held by someone (possibly the caller itself) and not expired: `current` says by whom. */
  | { granted: false; current: PartitionLease | null };

export interface ClusterStore {
  /**
   * Creates or refreshes a member held by process `instance`: `heartbeatAt = now`, `expiresAt =
   * now + ttlMs` (ms), `instance`, `address` and `bus` (null when not given). A compare-and-set: written only when there is no record, or
   * it is this instance's, or it has no instance, or it has expired (`expiresAt <= now`). A live
   * record of another instance is left alone and returned: one member id, one live process.
   * (MongoDB without atomic updates, FerretDB: two instances racing for an expired record in the
   * same instant may both be answered `held`; the next heartbeat of one of them is refused.)
   */
  heartbeatMember(member: MemberBeat, now: number, ttlMs: number): Promise<MemberHeartbeat>;

  /** Members with `expiresAt > now`, by member id. */
  listLiveMembers(now: number): Promise<MemberRecord[]>;

  /**
   * Deletes a member (graceful leave); with `instance`, only the record that instance holds (a
   * process fenced out by another with the same id never deletes the other's record).
   * @returns false when there was none
   */
  removeMember(memberId: string, instance?: string): Promise<boolean>;

  /**
   * Compare-and-set grant of a partition's lease to `owner` until `now + ttlMs`, only when it is
   * free: never leased, released, or expired (`expiresAt <= now`). The grant carries a new epoch,
   * the previous one + 1 (1 for the first). A lease held and not expired is never granted, not even
   * to its own holder (it renews instead).
   */
  acquireLease(partition: number, owner: string, now: number, ttlMs: number): Promise<LeaseGrant>;

  /**
   * Extends a held lease: compare-and-set on (partition, owner, epoch) and `expiresAt > now`;
   * `expiresAt` becomes `max(expiresAt, now + ttlMs)` (a renewal never shortens a lease, so a
   * holder's clock stepping back cannot make others take it early).
   * @returns the lease after the renewal, or null when it was lost (expired, released, or granted
   * to someone else: a newer epoch)
   */
  renewLease(partition: number, owner: string, epoch: number, now: number, ttlMs: number): Promise<PartitionLease | null>;

  /**
   * Gives a held lease up (hand-over, shutdown): compare-and-set on (partition, owner, epoch);
   * the record stays with `expiresAt` 0, so the next grant continues its epoch.
   * @returns false when the caller no longer held it
   */
  releaseLease(partition: number, owner: string, epoch: number): Promise<boolean>;

  /** Every lease record (held, expired or released), by partition. */
  listLeases(): Promise<PartitionLease[]>;

  /**
   * Raises the fencing epoch of every unfinished task (SCHEDULED, PENDING, RETRYING, BLOCKED,
   * RUNNING) of `partition` whose epoch is lower to `epoch`. A new owner calls it after its grant
   * and before it reads the partition: from then on `markPending` and `claimTasks` with an older
   * epoch leave those tasks alone (see their docs).
   * @returns how many tasks were raised
   */
  fencePartition(partition: number, epoch: number): Promise<number>;
}
