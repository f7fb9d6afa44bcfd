import { AttemptConflictError, InternalError, SchedulerError, StoreUnavailableError, TaskNotFoundError } from '../../domain/errors';
import type { ProgressValue } from '../../domain/progress';
import type { AttemptLogAppend } from '../../domain/attempt-log';
import type { CheckpointSaveResult } from '../../storage/checkpoint-store';
import type { SchedulerDeps } from '../deps';
import type { CheckpointReply, ProgressItem } from '../protocol';

/** Who runs an attempt now, as the dispatcher knows it. */
export type RunsAttempt = (taskId: string, attempt: number, workerId: string) => boolean;

/**
 * The dispatcher's side of the reports a running attempt makes besides its end: checkpoints and
 * progress from its worker. Only an attempt this dispatcher runs on that worker is written, and the
 * store checks again (compare-and-set on id, attempt, RUNNING), so a worker that was taken for lost
 * and lives on cannot overwrite what the task's newer attempt saved.
 */
export class RunningReports {
  constructor(
    private readonly deps: Pick<SchedulerDeps, 'store' | 'clock' | 'log'>,
    private readonly runs: RunsAttempt,
  ) {}

  /**
   * Stores a worker's checkpoint. @returns `ok` once committed, else the error its handler's
   * promise rejects with: `ATTEMPT_CONFLICT` (not the running attempt), `CHECKPOINT_TOO_LARGE`,
   * `VALIDATION_FAILED`, `TASK_NOT_FOUND`, or `INTERNAL_ERROR` when the write failed
   */
  async checkpoint(msg: { workerId: string; taskId: string; attempt: number; value: unknown }): Promise<CheckpointReply> {
    const { store, clock, log } = this.deps;
    try {
      const res: CheckpointSaveResult = this.runs(msg.taskId, msg.attempt, msg.workerId)
        ? await store.saveCheckpoint(msg.taskId, msg.attempt, msg.value, clock.now())
        : await this.notRunning(msg.taskId);
      if (res.kind === 'saved') return { ok: true, savedAt: res.savedAt, bytes: res.bytes };
      const err =
        res.kind === 'not_found'
          ? new TaskNotFoundError(msg.taskId)
          : new AttemptConflictError(msg.taskId, msg.attempt, res.state, res.attempt);
      return { ok: false, error: err.toJSON().error };
    } catch (err) {
      if (err instanceof SchedulerError) return { ok: false, error: err.toJSON().error };
      log.error({ err, task_id: msg.taskId }, 'saving a checkpoint failed');
      return { ok: false, error: new InternalError('the checkpoint could not be stored; the previous one stands').toJSON().error };
    }
  }

  /** Writes the progress reports of attempts this dispatcher runs on that worker (others are dropped). */
  async progress(msg: { workerId: string; reports: ProgressItem[] }): Promise<void> {
    const reports = msg.reports
      .filter((r) => this.runs(r.id, r.attempt, msg.workerId))
      .map((r) => ({ taskId: r.id, attempt: r.attempt, value: r.value as ProgressValue }));
    if (reports.length === 0) return;
    const { store, clock, log } = this.deps;
    // A store fault is logged once, by the store's health; progress is not kept (the next report replaces it).
    await store
      .reportProgress(reports, clock.now())
      .catch((err) => (err instanceof StoreUnavailableError ? undefined : log.warn({ err }, 'progress reports were not stored')));
  }

  /** Appends the `ctx.log` lines of attempts this dispatcher runs on that worker (others are dropped). */
  async logs(msg: { workerId: string; logs: AttemptLogAppend[] }): Promise<void> {
    const logs = msg.logs.filter((l) => this.runs(l.taskId, l.attempt, msg.workerId));
    if (logs.length === 0) return;
    const { store, clock, log } = this.deps;
    await store.appendAttemptLogs(logs, clock.now()).catch((err) => log.warn({ err }, 'attempt log lines were not stored'));
  }

  /** The conflict answer for an attempt this dispatcher does not run: what the task is now. */
  private async notRunning(taskId: string): Promise<CheckpointSaveResult> {
    const task = await this.deps.store.getTask(taskId);
    return task ? { kind: 'conflict', state: task.state, attempt: task.attempts } : { kind: 'not_found' };
  }
}
