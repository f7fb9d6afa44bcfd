import { CronEvaluator } from './cron-evaluator';
import { DueEntry } from '../../domain/task';
import { DEPS_RESOURCE, SchedulerDeps } from '../deps';
import { abortRunning, offerToOwners } from '../offer-to-owners';

/** Messages the cron actor accepts. */
export type CronActorMessages = {
  /** Loads the due definitions and starts firing. */
  start: { req: null; res: void };
  /** A definition was created, edited or deleted (by its id). */
  changed: { req: string; res: void };
  /** These tasks reached a terminal state (cron instances among them may release queued ones). */
  instancesEnded: { req: string[]; res: void };
  /** Stops firing. */
  stop: { req: null; res: void };
  /** Definitions in the evaluator's window (diagnostics). */
  stats: { req: null; res: { windowSize: number } };
};

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
