import type { PullGrant } from '../cluster/messages';
import type { OwnershipStatus } from '../cluster/ownership';
import type { DueEntry } from '../domain/task';
import type { ExternalCompletion, ExternalCompletionResult, LeasedAttempt, LeaseRequest } from '../services/ports';
import type { CronActorMessages, DispatcherMessages, PartitionOwnerMessages, RemotePull, RemotePullDemand } from './protocol';
import type { TypedRef } from './runtime/typed-ref';

/**
 * The other nodes of a cluster (cluster mode with Redis; absent in embedded mode). Told after the
 * local actors were: what it sends is a hint, never the only way a task is found.
 */
export interface PeerNotifier {
  /** Waiting tasks just offered to the local owners: wake their partitions' owners elsewhere. */
  offered(entries: readonly DueEntry[]): void;
  /** A RUNNING attempt must abort: tell the node that runs it. */
  abort(taskId: string, attempt: number): void;
  /**
   * This member left and released its leases, joined, or handed partitions over: the others run a
   * lease round now (the `left` channel, named for its first use).
   */
  left(): void;
  /** A cron definition was created, edited or deleted here: the other nodes' evaluators re-read it. */
  cronChanged(cronId: string): void;
  /** A lease request waits here with nothing ready: the owners elsewhere may grant it tasks (docs/CLUSTER.md "Pull queues"). */
  pullDemand(demand: RemotePullDemand): void;
  /** That lease request was answered or went away: the owners elsewhere drop its demand. */
  pullWithdraw(waiterId: string): void;
  /** Tasks this node's owners took for lease request `waiterId` of node `to`. */
  pullGrant(to: string, waiterId: string, queue: string, grants: PullGrant[]): void;
}

/** `value(e)` of each entry, grouped by the entry's partition (one message per owner). */
export function byPartition<T>(entries: readonly DueEntry[], value: (e: DueEntry) => T): Map<number, T[]> {
  const groups = new Map<number, T[]>();
  for (const e of entries) {
    const list = groups.get(e.partition);
    if (list) list.push(value(e));
    else groups.set(e.partition, [value(e)]);
  }
  return groups;
}

/**
 * The one place actor traffic is routed through: who talks to whom, by message. The supervisor
 * (and its lease component, for partition owners) registers the running actors; everything else
 * sends through the methods below and never holds another actor's reference. A message to an
 * actor that is not running (yet, or any more) is dropped: owners re-read the store, so a dropped
 * hint is never the only way a task is found. The other nodes of a cluster are a separate part
 * ({@link PeerNotifier}, set by `actors/peers.ts`), told after the local actors.
 */
export class ActorRouter {
  private dispatcherRef: TypedRef<DispatcherMessages> | null = null;
  private readonly ownerRefs: Array<TypedRef<PartitionOwnerMessages> | undefined> = [];
  private cronRef: TypedRef<CronActorMessages> | null = null;
  private peers: PeerNotifier | null = null;
  private ownershipProbe: (() => OwnershipStatus) | null = null;
  private leaseRound: (() => void) | null = null;

  /** The dispatcher, or null while it is not running (the supervisor's and tests' asks). */
  get dispatcher(): TypedRef<DispatcherMessages> | null {
    return this.dispatcherRef;
  }

  /** The cron actor, or null while it is not running. */
  get cron(): TypedRef<CronActorMessages> | null {
    return this.cronRef;
  }

  /** The partition owners running on this node (the supervisor starts and stops them). */
  owners(): Array<TypedRef<PartitionOwnerMessages>> {
    return this.ownerRefs.filter((o): o is TypedRef<PartitionOwnerMessages> => o !== undefined);
  }

  setDispatcher(ref: TypedRef<DispatcherMessages> | null): void {
    this.dispatcherRef = ref;
  }

  setCron(ref: TypedRef<CronActorMessages> | null): void {
    this.cronRef = ref;
  }

  /** The owner of partition `p` on this node; null: none (its lease was lost or released). */
  setOwner(p: number, ref: TypedRef<PartitionOwnerMessages> | null): void {
    if (ref) this.ownerRefs[p] = ref;
    else delete this.ownerRefs[p];
  }

  /** True when partition `p` has an owner on this node. */
  hasOwner(p: number): boolean {
    return this.ownerRefs[p] !== undefined;
  }

  /** The other nodes (cluster mode); null: this node is alone. */
  setPeers(peers: PeerNotifier | null): void {
    this.peers = peers;
  }

  /** Cluster mode: partition ownership as the supervisor's lease component sees it. */
  setOwnershipProbe(probe: (() => OwnershipStatus) | null): void {
    this.ownershipProbe = probe;
  }

  /** Cluster mode: runs a lease round soon (another member's membership changed; see PartitionLeases.roundSoon). */
  setLeaseRound(round: (() => void) | null): void {
    this.leaseRound = round;
  }

  /** Another member left, joined or released partitions: this node's leases hand over or take them now. */
  memberLeft(): void {
    this.leaseRound?.();
  }

  /** This member left, joined or handed partitions over: the other nodes run a lease round now. */
  membershipChanged(): void {
    this.peers?.left();
  }

  /** Partition ownership (cluster mode), or null in the embedded profile or before the leases start. */
  ownership(): OwnershipStatus | null {
    return this.ownershipProbe?.() ?? null;
  }

  /**
   * Hands waiting tasks to the owners of their partitions, one `offer` message per partition: new
   * submissions, cron instances and workflow tasks released by a completion. An owner keeps the
   * entries due inside its window; a later window read finds the others. In cluster mode the
   * other nodes are told of the entries of the partitions this node does not own (their owner
   * wakes): a partition owned here has no owner elsewhere, so its wake would only come back to
   * this node, which drops its own messages (one node of a cluster sent a NOTIFY of every
   * submitted task to itself: 10-20 % of its main thread's CPU on the PostgreSQL bus).
   */
  offer(entries: readonly DueEntry[]): void {
    let elsewhere: DueEntry[] | null = null;
    for (const [p, list] of byPartition(entries, (e) => e)) {
      const owner = this.ownerRefs[p];
      if (owner) owner.tell('offer', list);
      else (elsewhere ??= []).push(...list);
    }
    if (elsewhere && this.peers) this.peers.offered(elsewhere);
  }

  /** `offer` to the local owner of partition `p` only (entries handed back, other nodes' wake-ups). */
  offerLocal(p: number, entries: DueEntry[]): void {
    this.ownerRefs[p]?.tell('offer', entries);
  }

  /** The dispatcher is done with these ids of partition `p` (claimed or dropped): the owner's credits come back. */
  released(p: number, ids: string[]): void {
    this.ownerRefs[p]?.tell('released', ids);
  }

  /** Due tasks from a partition owner to the dispatcher. @param onError delivery failed */
  enqueue(entries: DueEntry[], onError?: (err: unknown) => void): void {
    this.dispatcherRef?.tell('enqueue', entries, onError);
  }

  /**
   * Aborts a RUNNING attempt (a cancel): the local dispatcher ignores an attempt it does not run;
   * in cluster mode the other nodes are told too.
   */
  abort(taskId: string, attempt: number): void {
    this.abortLocal(taskId, attempt);
    this.peers?.abort(taskId, attempt);
  }

  /** {@link abort} on this node only (another node's cancel). */
  abortLocal(taskId: string, attempt: number): void {
    this.dispatcherRef?.tell('abort', { taskId, attempt });
  }

  /** These tasks reached a terminal state: cron instances among them may release queued ones. */
  instancesEnded(taskIds: string[]): void {
    this.cronRef?.tell('instancesEnded', taskIds);
  }

  /**
   * A cron definition was created, edited or deleted: this node's evaluator re-reads it, and in
   * cluster mode every other node's too (each evaluates every cron: without the news, a cron made
   * here would fire only here until their next reload, up to half `cronHorizonMs` later).
   */
  cronChanged(cronId: string): void {
    this.cronChangedLocal(cronId);
    this.peers?.cronChanged(cronId);
  }

  /** {@link cronChanged} on this node only (another node's news). */
  cronChangedLocal(cronId: string): void {
    this.cronRef?.tell('changed', cronId);
  }

  /** An external consumer's report, to the dispatcher that owns the attempt. @throws Error when the dispatcher is not running */
  completeExternal(c: ExternalCompletion): Promise<ExternalCompletionResult> {
    return this.dispatcherRef ? this.dispatcherRef.ask('completeExternal', c) : Promise.reject(new Error('the dispatcher is not running'));
  }

  /** A pull worker's lease request, to this node's dispatcher (it hands out tasks of the partitions owned here); `[]` when it is not running. */
  lease(req: LeaseRequest): Promise<LeasedAttempt[]> {
    return this.dispatcherRef ? this.dispatcherRef.ask('lease', req) : Promise.resolve([]);
  }

  /** The client of a lease request went away. */
  leaveLease(waiterId: string): void {
    this.dispatcherRef?.tell('leaveLease', waiterId);
  }

  /** Attempts whose lease answer never reached its client. */
  leaseUndelivered(attempts: Array<{ taskId: string; attempt: number }>): void {
    this.dispatcherRef?.tell('leaseUndelivered', attempts);
  }

  /** Another node's pull traffic (a demand, its withdrawal, tasks granted to a lease request here), to this node's dispatcher. */
  remotePull(msg: RemotePull): void {
    this.dispatcherRef?.tell('remotePull', msg);
  }

  /** The other nodes of the cluster, or null (embedded mode, or before they are attached). */
  get peerNotifier(): PeerNotifier | null {
    return this.peers;
  }
}
