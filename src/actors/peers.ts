import type { ActorDirectory, PeerNotifier } from './deps';
import { byPartition } from './offer-to-owners';
import type { PartitionOwnerMessages } from './protocol';
import type { TypedRef } from './typed-ref';
import type { Clock } from '../domain/clock';
import type { DueEntry } from '../domain/task';
import type { CoordinationBus } from '../cluster/redis/bus';
import type { Coordination } from '../cluster/redis/coordination';

/**
 * Which local actor owns partition `p`, or null when this node does not own it. The default reads
 * the directory (today every node starts an owner per partition); partition leases replace it
 * with "the owner this node holds a lease for".
 */
export type LocalOwnerOf = (p: number) => TypedRef<PartitionOwnerMessages> | null;

/**
 * The {@link PeerNotifier} of a cluster node over the {@link CoordinationBus}: publishes a `wake`
 * per partition for entries due inside the horizon (`now + horizonMs`; later ones are read by the
 * owners' window refreshes anyway), and a `cancel` per aborted attempt. Publishing never blocks
 * or fails the caller.
 */
export class ClusterPeers implements PeerNotifier {
  constructor(
    private readonly bus: CoordinationBus,
    private readonly clock: Clock,
    private readonly horizonMs: number,
  ) {}

  offered(entries: readonly DueEntry[]): void {
    const end = this.clock.now() + this.horizonMs;
    const soon = entries.filter((e) => e.dueAt <= end);
    for (const [partition, list] of byPartition(soon, (e) => e)) void this.bus.publish('wake', { partition, entries: list });
  }

  abort(taskId: string, attempt: number): void {
    void this.bus.publish('cancel', { taskId, attempt });
  }
}

/**
 * Delivers other nodes' messages to this node's actors: a `wake` to the local owner of its
 * partition as an `offer` (ignored when this node does not own the partition), a `cancel` to the
 * dispatcher as an `abort` (which ignores an attempt it does not run). Delivery goes straight to
 * the actors, never back through {@link ClusterPeers}: no echo between nodes.
 * @param localOwner see {@link LocalOwnerOf} (default: `directory.owners[p]`)
 */
export function deliverToLocalActors(bus: CoordinationBus, directory: ActorDirectory, localOwner?: LocalOwnerOf): void {
  const ownerOf: LocalOwnerOf = localOwner ?? ((p) => directory.owners[p] ?? null);
  bus.on('wake', (msg) => ownerOf(msg.partition)?.tell('offer', msg.entries));
  bus.on('cancel', (msg) => directory.dispatcher?.tell('abort', { taskId: msg.taskId, attempt: msg.attempt }));
}

/**
 * Starts the pub/sub side of a node's coordination once the actors exist: other nodes are told of
 * offers and aborts (`directory.peers`), and their messages reach the local owner or dispatcher.
 * @param localOwner which local actor owns a partition (partition leases hook in here)
 */
export async function attachPeers(coordination: Pick<Coordination, 'bus' | 'clock'>, directory: ActorDirectory, horizonMs: number, localOwner?: LocalOwnerOf): Promise<void> {
  deliverToLocalActors(coordination.bus, directory, localOwner);
  directory.peers = new ClusterPeers(coordination.bus, coordination.clock, horizonMs);
  await coordination.bus.start();
}
