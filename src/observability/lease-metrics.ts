import { Counter, Gauge, Registry } from 'prom-client';
import type { OwnershipEnd, OwnershipMetrics } from '../cluster/ownership';

/**
 * Partition ownership metrics (cluster mode, docs/DESIGN.md §12), registered on the service's registry:
 * - `scheduler_partitions_owned` gauge: partitions this member holds a lease on;
 * - `scheduler_lease_acquisitions_total`, `scheduler_lease_renewals_total`;
 * - `scheduler_lease_losses_total{reason}`: `lost` (a renewal was refused: someone else holds it)
 *   or `expired` (the safety deadline passed without a renewal: store unreachable, process stalled);
 * - `scheduler_lease_handovers_total`: leases released because rendezvous moved the partition.
 * Create one per registry (prom-client refuses a name twice).
 */
export class LeaseMetrics implements OwnershipMetrics {
  private readonly ownedGauge: Gauge<string>;
  private readonly acquisitions: Counter<string>;
  private readonly renewals: Counter<string>;
  private readonly losses: Counter<'reason'>;
  private readonly handovers: Counter<string>;
  private readonly otherBusGauge: Gauge<string>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.ownedGauge = new Gauge({
      name: 'scheduler_partitions_owned',
      help: 'Partitions this member holds a lease on (cluster mode).',
      registers,
    });
    this.acquisitions = new Counter({
      name: 'scheduler_lease_acquisitions_total',
      help: 'Partition leases granted to this member.',
      registers,
    });
    this.renewals = new Counter({ name: 'scheduler_lease_renewals_total', help: 'Partition lease renewals that succeeded.', registers });
    this.losses = new Counter({
      name: 'scheduler_lease_losses_total',
      help: 'Partition leases lost: reason lost (renewal refused) or expired (safety deadline passed without a renewal). The owner stops at once.',
      labelNames: ['reason'],
      registers,
    });
    this.handovers = new Counter({
      name: 'scheduler_lease_handovers_total',
      help: 'Partition leases released because rendezvous hashing moved the partition to another member.',
      registers,
    });
    this.otherBusGauge = new Gauge({
      name: 'scheduler_cluster_members_on_other_bus',
      help: 'Live members whose heartbeat says another bus than this member uses (Redis pub/sub, LISTEN/NOTIFY, none): they do not hear one another (wake-ups, cancels, pull demands).',
      registers,
    });
  }

  otherBus(members: number): void {
    this.otherBusGauge.set(members);
  }

  owned(count: number): void {
    this.ownedGauge.set(count);
  }

  renewed(): void {
    this.renewals.inc();
  }

  acquired(): void {
    this.acquisitions.inc();
  }

  ended(why: OwnershipEnd): void {
    if (why === 'lost' || why === 'expired') this.losses.inc({ reason: why });
    else if (why === 'handed_over') this.handovers.inc();
  }
}
