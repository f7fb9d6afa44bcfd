import { checkpointText } from '../../domain/checkpoint';
import { AttemptLogAppend, AttemptLogWindow } from '../../domain/attempt-log';
import type { Clock, TimerHandle } from '../../domain/clock';
import { InternalError } from '../../domain/errors';
import { RemoteSchedulerError } from '../../contract/error-catalog';
import { assertProgress } from '../../domain/progress';
import type { CheckpointReply, ProgressItem } from '../protocol';

/** How often a worker sends the progress of its attempts at most (ms), unless its runner is told otherwise. */
export const DEFAULT_PROGRESS_INTERVAL_MS = 1000;

/** Sends a checkpoint to the dispatcher and resolves with its answer (after the commit). */
export type CheckpointSender = (taskId: string, attempt: number, value: unknown) => Promise<CheckpointReply>;

/**
 * `ctx.checkpoint(value)` of one attempt: the value is checked here first (a value over the cap or
 * not JSON never crosses the process boundary), then the dispatcher stores it as a compare-and-set
 * on the attempt and answers once it is committed.
 * @throws (rejects) ValidationError or CheckpointTooLargeError from the check; the dispatcher's
 *   refusal (e.g. `ATTEMPT_CONFLICT`) as a RemoteSchedulerError with its code; InternalError when
 *   this worker was started without a way to send checkpoints
 */
export async function sendCheckpoint(send: CheckpointSender | null, taskId: string, attempt: number, value: unknown): Promise<void> {
  checkpointText(value);
  if (!send) throw new InternalError('checkpoints are not available in this runner');
  const reply = await send(taskId, attempt, value);
  if (!reply.ok) throw new RemoteSchedulerError(reply.error);
}

/**
 * The worker's progress reports: the latest value per attempt, sent in one message at most every
 * `intervalMs` (on the injected clock). A value replaced before its message went is never sent:
 * progress is advisory, and a handler reporting per record must not cost a store write per record.
 * An attempt that ends has its pending value sent at once, before its completion report.
 */
export class ProgressThrottle {
  private readonly pending = new Map<string, ProgressItem>();
  private readonly gate: IntervalGate;

  /** @param send receives each batch (the worker tells the dispatcher) */
  constructor(
    clock: Clock,
    intervalMs: number,
    private readonly send: (reports: ProgressItem[]) => void,
  ) {
    this.gate = new IntervalGate(clock, intervalMs, () => this.flush());
  }

  /**
   * Keeps `value` as the attempt's latest progress and schedules a send.
   * @throws ValidationError (`progress`) when it is not a progress value (domain/progress.ts)
   */
  report(id: string, attempt: number, value: unknown): void {
    assertProgress(value);
    this.pending.set(id, { id, attempt, value });
    this.gate.arm();
  }

  /** The attempt ended: its pending value (if any) goes now, ahead of its completion. */
  ended(id: string, attempt: number): void {
    const p = this.pending.get(id);
    if (!p || p.attempt !== attempt) return;
    this.pending.delete(id);
    this.send([p]);
  }

  /** @returns whether a batch went */
  private flush(): boolean {
    if (this.pending.size === 0) return false;
    const batch = [...this.pending.values()];
    this.pending.clear();
    this.send(batch);
    return true;
  }
}

/**
 * The `ctx.log` lines of a worker's attempts, kept per attempt in a bounded window
 * (domain/attempt-log.ts) and sent to the dispatcher at most once every `intervalMs` (on the
 * injected clock), as the new lines of each attempt with the first line number still kept. An
 * attempt that ends has its last lines sent at once, before its completion report. Lines are
 * advisory like progress: those of the last interval are lost with a process that dies.
 */
export class LogShipper {
  private readonly windows = new Map<string, { attempt: number; window: AttemptLogWindow }>();
  private readonly gate: IntervalGate;

  /** @param send receives each batch (the worker tells the dispatcher) */
  constructor(
    private readonly clock: Clock,
    intervalMs: number,
    private readonly send: (logs: AttemptLogAppend[]) => void,
  ) {
    this.gate = new IntervalGate(clock, intervalMs, () => this.flush());
  }

  /** Keeps one line of attempt `attempt` of task `id` and schedules a send. */
  log(id: string, attempt: number, message: unknown, fields?: unknown): void {
    let w = this.windows.get(id);
    if (!w || w.attempt !== attempt) {
      w = { attempt, window: new AttemptLogWindow() };
      this.windows.set(id, w);
    }
    w.window.add(this.clock.now(), message, fields);
    this.gate.arm();
  }

  /** The attempt ended: its unsent lines (if any) go now, and its window is forgotten. */
  ended(id: string, attempt: number): void {
    const w = this.windows.get(id);
    if (!w || w.attempt !== attempt) return;
    this.windows.delete(id);
    if (w.window.hasNew) this.send([{ taskId: id, attempt, ...w.window.takeNew() }]);
  }

  /** @returns whether a batch went */
  private flush(): boolean {
    const batch: AttemptLogAppend[] = [];
    for (const [taskId, w] of this.windows) if (w.window.hasNew) batch.push({ taskId, attempt: w.attempt, ...w.window.takeNew() });
    if (batch.length === 0) return false;
    this.send(batch);
    return true;
  }
}

/**
 * Runs `flush` at most once every `intervalMs` on the injected clock: `arm` (after new data)
 * starts one timer unless one is armed, due `intervalMs` after the last flush that sent something.
 */
class IntervalGate {
  private timer: TimerHandle | null = null;
  private lastSent = -Infinity;

  /** @param flush sends what is pending; @returns whether it sent anything */
  constructor(
    private readonly clock: Clock,
    private readonly intervalMs: number,
    private readonly flush: () => boolean,
  ) {}

  arm(): void {
    if (this.timer) return;
    const wait = Math.max(0, this.lastSent + this.intervalMs - this.clock.now());
    this.timer = this.clock.setTimeout(() => {
      this.timer = null;
      const now = this.clock.now();
      if (this.flush()) this.lastSent = now;
    }, wait);
  }
}
