import { ActorContext, spawnLocal } from './runtime/comedy';
import { CronActor } from './cron/cron-actor';
import type { CronActorMessages, DispatcherMessages, PartitionOwnerMessages } from './protocol';
import { DEPS_RESOURCE, SchedulerDeps } from './deps';
import { DispatcherActor } from './dispatcher/dispatcher';
import { LeasedOwners } from './owner/leased-owners';
import { PartitionOwnerActor } from './owner/partition-owner';
import { TypedRef } from './runtime/typed-ref';

/**
 * Root of the scheduler's actor tree: dispatcher (with the forked workers as its children),
 * `PARTITIONS` partition owners and the cron actor. In cluster mode (`deps.cluster`) owners exist
 * only for the partitions this member holds a lease on ({@link LeasedOwners}). It registers them in the {@link ActorRouter} it is given, the
 * one place actor traffic goes through.
 */
export class SupervisorActor {
  static inject(): string[] {
    return [DEPS_RESOURCE];
  }

  private self: ActorContext | null = null;
  private leased: LeasedOwners | null = null;

  constructor(private readonly deps: SchedulerDeps) {}

  initialize(self: ActorContext): void {
    this.self = self;
  }

  async start(): Promise<void> {
    const self = this.self as ActorContext;
    const { router, config } = this.deps;
    const dispatcher = new TypedRef<DispatcherMessages>(await spawnLocal(self, DispatcherActor, 'dispatcher'));
    router.setDispatcher(dispatcher);
    if (this.deps.cluster) this.leased = new LeasedOwners(self, this.deps);
    for (let p = 0; p < config.partitions && !this.leased; p++) {
      const ref = await spawnLocal(self, PartitionOwnerActor, `partition-${p}`, { partition: p });
      router.setOwner(p, new TypedRef<PartitionOwnerMessages>(ref));
    }
    const cron = new TypedRef<CronActorMessages>(await spawnLocal(self, CronActor, 'cron'));
    router.setCron(cron);
    await dispatcher.ask('startWorkers', null);
    await Promise.all(router.owners().map((o) => o.ask('start', null)));
    await this.leased?.start();
    await cron.ask('start', null);
  }

  /** comedy hook: a system destroyed without a drain still leaves the cluster (timers stop). */
  async destroy(): Promise<void> {
    await this.leased?.stop();
  }

  async drain(msg: { graceMs: number }): Promise<{ stillRunning: number; unwritten: number }> {
    const { router } = this.deps;
    await router.cron?.ask('stop', null);
    await this.leased?.stop();
    await Promise.all(router.owners().map((o) => o.ask('stop', null)));
    return router.dispatcher ? router.dispatcher.ask('drain', msg) : { stillRunning: 0, unwritten: 0 };
  }
}
