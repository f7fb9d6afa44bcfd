import { ActorRouter, byPartition, PeerNotifier } from './router';
import type { Clock } from '../domain/clock';
import type { DueEntry } from '../domain/task';
import type { CoordinationBus } from '../cluster/coordination-bus';
import type { PullGrant } from '../cluster/messages';
import type { RemotePullDemand } from './protocol';
import type { TaskEndPublisher, TaskEndSubscriber } from '../services/ports';

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

  left(): void {
    void this.bus.publish('left', {});
  }

  cronChanged(cronId: string): void {
    void this.bus.publish('cron', { cronId });
  }

  pullDemand(demand: RemotePullDemand): void {
    void this.bus.publish('pull', demand);
  }

  pullWithdraw(waiterId: string): void {
    void this.bus.publish('unpull', { waiterId });
  }

  pullGrant(to: string, waiterId: string, queue: string, grants: PullGrant[]): void {
    void this.bus.publish('grant', { to, waiterId, queue, grants });
  }
}

/**
 * Delivers other nodes' messages to this node's actors: a `wake` to the local owner of its
 * partition as an `offer` (ignored when this node does not own the partition), a `cancel` to the
 * dispatcher as an `abort` (which ignores an attempt it does not run), a `left` to the partition
 * leases as a round now (the member that left released its leases), a `cron` to the cron evaluator
 * (it re-reads the definition), a `pull`, `unpull` or `grant` (this node's only: `to`) to the
 * dispatcher's pull lanes. Delivery goes straight to
 * the actors, never back through {@link ClusterPeers}: no echo between nodes.
 */
export function deliverToLocalActors(bus: CoordinationBus, router: ActorRouter): void {
  bus.on('wake', (msg) => router.offerLocal(msg.partition, msg.entries));
  bus.on('cancel', (msg) => router.abortLocal(msg.taskId, msg.attempt));
  bus.on('left', () => router.memberLeft());
  bus.on('cron', (msg) => router.cronChangedLocal(msg.cronId));
  bus.on('pull', (msg) => {
    const { from, waiterId, queue, max, waitMs } = msg;
    router.remotePull({ kind: 'demand', from, demand: { waiterId, queue, max, waitMs } });
  });
  bus.on('unpull', (msg) => router.remotePull({ kind: 'withdraw', from: msg.from, waiterId: msg.waiterId }));
  bus.on('grant', (msg) => {
    if (msg.to === bus.nodeId)
      router.remotePull({ kind: 'granted', from: msg.from, waiterId: msg.waiterId, queue: msg.queue, grants: msg.grants });
  });
}

/**
 * Shares task ends between nodes: the ends this node records (its dispatcher, its cancels) are
 * published on the `ended` channel, one message per announcement; those of other nodes are
 * announced here marked `fromPeer`, so that the long polls (`?wait=`) held here wake at once
 * instead of at their next re-check, and are never sent on again (no echo).
 */
export function relayTaskEnds(bus: CoordinationBus, events: TaskEndPublisher & TaskEndSubscriber): void {
  events.subscribe((ends) => {
    if (!ends.fromPeer) void bus.publish('ended', { taskIds: ends.taskIds, workflowIds: ends.workflowIds ?? [] });
  });
  bus.on('ended', (msg) => events.publish({ taskIds: msg.taskIds, workflowIds: msg.workflowIds, fromPeer: true }));
}

/**
 * Starts the pub/sub side of a node's coordination once the actors exist: other nodes are told of
 * offers and aborts (the router's peers), and their messages reach the local owner or dispatcher;
 * then the others are told this member joined.
 * @param coordination the bus (Redis pub/sub, or PostgreSQL LISTEN/NOTIFY without Redis) and the
 *   cluster's clock (the horizon of the wakes is measured on it)
 * @param taskEnds this node's task-end events, shared with the other nodes ({@link relayTaskEnds}); absent: not shared
 */
export async function attachPeers(
  coordination: { readonly bus: CoordinationBus; readonly clock: Clock },
  router: ActorRouter,
  horizonMs: number,
  taskEnds?: TaskEndPublisher & TaskEndSubscriber,
): Promise<void> {
  deliverToLocalActors(coordination.bus, router);
  if (taskEnds) relayTaskEnds(coordination.bus, taskEnds);
  router.setPeers(new ClusterPeers(coordination.bus, coordination.clock, horizonMs));
  await coordination.bus.start();
  // This member's first lease round ran before the bus was attached, so its joining was told to
  // nobody: the others run a round now and hand over its share (PartitionLeases, events.changed).
  router.membershipChanged();
}
