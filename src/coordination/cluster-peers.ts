import type { ActorDirectory, PeerNotifier } from '../actors/deps';
import { byPartition } from '../actors/offer-to-owners';
import type { PartitionOwnerMessages } from '../actors/protocol';
import type { TypedRef } from '../actors/typed-ref';
import type { Clock } from '../domain/clock';
import type { DueEntry } from '../domain/task';
import type { CoordinationBus } from './bus';

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
