/**
 * What a member's partition leases (partition-leases.ts) exchange with their host and readers:
 * the settings they are made with, the events that start and stop partition owners, the metric
 * hooks, and the status readiness reports.
 */
import type { Clock } from '../domain/clock';
import type { ClusterStore } from '../storage/cluster-store';
import type { BusKind } from './bus-kind';
import type { PartitionFences } from './partition-fences';

/** Why a partition's owner was stopped. `lost` and `expired` are losses; the others are planned. */
export type OwnershipEnd = 'handed_over' | 'lost' | 'expired' | 'shutdown';

/** What the component asks of its host (the supervisor): start and stop partition owners. */
export interface OwnershipEvents {
  /** The lease of `partition` was granted with `epoch` and its tasks fenced: start its owner. */
  acquired(partition: number, epoch: number): void;
  /** Stop the owner of `partition` now (its fence is already revoked). */
  stopped(partition: number, epoch: number, why: OwnershipEnd): void;
  /** This member left (graceful stop): its leases are released and its record removed; tell the others. */
  left?(): void;
  /**
   * This member joined (its first round) or released partitions rendezvous now gives to others:
   * tell the others, so that they hand over or take them at once instead of at their next round
   * (up to a third of the TTL each way: a joiner's share moved 5–15 s after it joined).
   */
  changed?(): void;
}

/** Metric hooks (observability/metrics.ts wires them to prom-client). */
export interface OwnershipMetrics {
  owned(count: number): void;
  renewed(): void;
  acquired(): void;
  ended(why: OwnershipEnd): void;
  /** Live members on another bus than this one's (`bus-agreement.ts`). */
  otherBus?(members: number): void;
}

/** What readiness and diagnostics see. */
export interface OwnershipStatus {
  memberId: string;
  /** True once the first round has run (member registered, free partitions acquired). */
  joined: boolean;
  /** Partitions held and fenced (their owners run), ascending. */
  owned: number[];
  /** Partitions whose lease is held while their tasks are being fenced, ascending. */
  fencing: number[];
  partitions: number;
  /** Live members seen in the last round (this one included). */
  liveMembers: number;
  /** True once another process took this member id over: this one owns nothing from then on. */
  fencedOut: boolean;
}

export interface PartitionLeasesOptions {
  store: ClusterStore;
  clock: Clock;
  /** Shared with the partition owners and the dispatcher (they read tokens from it). */
  fences: PartitionFences;
  events: OwnershipEvents;
  memberId: string;
  /** This process's instance token (member-claim.ts); default: a fresh one. */
  instance?: string;
  /** Where this member can be reached (informational). */
  address?: string | null;
  /** This member's bus (`bus-kind.ts`), recorded with its heartbeat and compared with the others' at each round; absent: neither. */
  bus?: BusKind;
  /** Partition count P. */
  partitions: number;
  /** Lease and member TTL (ms). Rounds run every third of it. */
  ttlMs: number;
  /** Stop this long (ms) before a lease's local expiry; default ttl / 5. Must be below 2/3 ttl. */
  safetyMarginMs?: number;
  metrics?: OwnershipMetrics;
  log?: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void; info?(obj: object, msg: string): void };
}
