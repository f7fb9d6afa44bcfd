import { CronEvaluator } from './cron-evaluator';
import { DueEntry } from '../../domain/task';
import { DEPS_RESOURCE, SchedulerDeps } from '../deps';
import { abortRunning, offerToOwners } from '../offer-to-owners';

/**
 * The cron actor (DESIGN §2, §7): hosts the {@link CronEvaluator} in the supervisor's tree and
 * routes what it produces — new instances to their partition owners, aborts of cancelled running
 * instances to the dispatcher.
 */
export class CronActor {
  static inject(): string[] {
    return [DEPS_RESOURCE];
  }

  private readonly evaluator: CronEvaluator;

  constructor(deps: SchedulerDeps) {
    const { directory } = deps;
    this.evaluator = new CronEvaluator({
      ...deps,
      onInstances: (entries: DueEntry[]) => offerToOwners(directory, entries),
      onAborts(aborts) {
        for (const a of aborts) abortRunning(directory, a.taskId, a.attempt);
      },
    });
  }

  start(): void {
    this.evaluator.start();
  }

  changed(cronId: string): void {
    this.evaluator.changed(cronId);
  }

  instancesEnded(taskIds: string[]): void {
    this.evaluator.instancesEnded(taskIds);
  }

  async stop(): Promise<void> {
    this.evaluator.stop();
    await this.evaluator.settled();
  }

  stats(): { windowSize: number } {
    return { windowSize: this.evaluator.windowSize };
  }

  destroy(): void {
    this.evaluator.stop();
  }
}
