import { ActorRouter, byPartition, PeerNotifier } from './router';
import type { Clock } from '../domain/clock';
import type { DueEntry } from '../domain/task';
import type { CoordinationBus } from '../cluster/redis/bus';
import type { Coordination } from '../cluster/redis/coordination';

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
 */
export function deliverToLocalActors(bus: CoordinationBus, router: ActorRouter): void {
  bus.on('wake', (msg) => router.offerLocal(msg.partition, msg.entries));
  bus.on('cancel', (msg) => router.abortLocal(msg.taskId, msg.attempt));
}

/**
 * Starts the pub/sub side of a node's coordination once the actors exist: other nodes are told of
 * offers and aborts (the router's peers), and their messages reach the local owner or dispatcher.
 */
export async function attachPeers(
  coordination: Pick<Coordination, 'bus' | 'clock'>,
  router: ActorRouter,
  horizonMs: number,
): Promise<void> {
  deliverToLocalActors(coordination.bus, router);
  router.setPeers(new ClusterPeers(coordination.bus, coordination.clock, horizonMs));
  await coordination.bus.start();
}
