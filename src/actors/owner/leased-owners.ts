import { busKindOf } from '../../cluster/bus-kind';
import { ActorContext, spawnLocal } from '../runtime/comedy';
import { PartitionLeases } from '../../cluster/partition-leases';
import { LeaseMetrics } from '../../observability/lease-metrics';
import type { SchedulerDeps } from '../deps';
import { PartitionOwnerActor } from './partition-owner';
import type { PartitionOwnerMessages } from '../protocol';
import { TypedRef } from '../runtime/typed-ref';

/**
 * Cluster mode: partition owners that exist only while this member holds their partition's lease.
 * Runs the {@link PartitionLeases} component for the supervisor and starts a
 * {@link PartitionOwnerActor} (with its lease epoch) when a lease is granted, stops and destroys it
 * when the lease ends. Starts and stops of one partition run one after the other, in the order the
 * component decided them. The owner also checks the shared fences before each write, so it stops
 * firing at the moment the lease ends, before its `stop` message arrives.
 */
export class LeasedOwners {
  private readonly leases: PartitionLeases;
  /** Per partition: the chain of its pending starts and stops. */
  private readonly chains = new Map<number, Promise<void>>();
  /** The owners this component started, by partition (registered in the router while they run). */
  private readonly owners = new Map<number, TypedRef<PartitionOwnerMessages>>();

  /**
   * @param self the supervisor (parent of the owner actors)
   * @param deps the scheduler's deps; `deps.cluster` must be set
   * @throws Error when `deps.cluster` is missing
   */
  constructor(
    private readonly self: ActorContext,
    private readonly deps: SchedulerDeps,
  ) {
    const cluster = deps.cluster;
    if (!cluster) throw new Error('LeasedOwners needs deps.cluster (cluster mode)');
    this.leases = new PartitionLeases({
      store: deps.store,
      clock: deps.clock,
      fences: cluster.fences,
      memberId: cluster.memberId,
      ...(cluster.instance ? { instance: cluster.instance } : {}),
      address: `${deps.config.host}:${deps.config.port}`,
      bus: busKindOf(deps.config),
      partitions: deps.config.partitions,
      ttlMs: deps.config.leaseTtlMs,
      metrics: new LeaseMetrics(deps.metrics.registry),
      log: deps.log,
      events: {
        acquired: (partition, epoch) => this.then(partition, () => this.startOwner(partition, epoch)),
        stopped: (partition) => this.then(partition, () => this.stopOwner(partition)),
        left: () => deps.router.membershipChanged(),
        changed: () => deps.router.membershipChanged(),
      },
    });
    deps.router.setOwnershipProbe(() => this.leases.status());
    deps.router.setLeaseRound(() => void this.leases.roundSoon());
  }

  /** Joins the cluster: the first round acquires the free partitions this member should own. */
  async start(): Promise<void> {
    await this.leases.start();
  }

  /** Leaves: stops every owner, releases the leases (others take them at once), waits for the stops. */
  async stop(): Promise<void> {
    await this.leases.stop();
    await Promise.all([...this.chains.values()]);
  }

  private then(partition: number, step: () => Promise<void>): void {
    const next = (this.chains.get(partition) ?? Promise.resolve())
      .then(step)
      .catch((err) => this.deps.log.error({ err, partition }, 'starting or stopping a partition owner failed'));
    this.chains.set(partition, next);
    void next.finally(() => {
      if (this.chains.get(partition) === next) this.chains.delete(partition);
    });
  }

  private async startOwner(partition: number, epoch: number): Promise<void> {
    if (this.deps.cluster?.fences.epochOf(partition) !== epoch) return; // already lost again
    const ref = await spawnLocal(this.self, PartitionOwnerActor, `partition-${partition}-epoch-${epoch}`, { partition, epoch });
    const owner = new TypedRef<PartitionOwnerMessages>(ref);
    this.owners.set(partition, owner);
    this.deps.router.setOwner(partition, owner);
    await owner.ask('start', null);
  }

  private async stopOwner(partition: number): Promise<void> {
    const owner = this.owners.get(partition);
    if (!owner) return;
    this.owners.delete(partition);
    this.deps.router.setOwner(partition, null);
    await owner.ask('stop', null).catch(() => undefined);
    await (owner.ref as { destroy?: () => Promise<void> }).destroy?.();
  }
}
