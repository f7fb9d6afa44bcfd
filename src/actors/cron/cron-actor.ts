import { CronEvaluator } from './cron-evaluator';
import { DueEntry } from '../../domain/task';
import { DEPS_RESOURCE, SchedulerDeps } from '../deps';

/**
 * The cron actor (docs/DESIGN.md §2, §7): hosts the {@link CronEvaluator} in the supervisor's tree and
 * routes what it produces — new instances to their partition owners, aborts of cancelled running
 * instances to the dispatcher.
 */
export class CronActor {
  static inject(): string[] {
    return [DEPS_RESOURCE];
  }

  private readonly evaluator: CronEvaluator;

  constructor(deps: SchedulerDeps) {
    const { router } = deps;
    this.evaluator = new CronEvaluator({
      ...deps,
      onInstances: (entries: DueEntry[]) => router.offer(entries),
      onAborts(aborts) {
        for (const a of aborts) router.abort(a.taskId, a.attempt);
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
