/**
 * The reports of a running attempt that need not wait for the scheduler: `ctx.log` lines, sent in
 * batches, and `ctx.progress` values, sent at most once per interval (only the latest counts). Each
 * attempt has its own; both stop at the attempt's end (its last lines go before its completion).
 */
import type { LogLine } from './worker-api';
import type { ProgressValue, WorkerClock } from './types';

/** Default interval of log batches and progress reports (ms): the scheduler's own workers' second. */
export const REPORT_INTERVAL_MS = 1000;

/** Most lines held for one attempt between batches; older lines go first (the scheduler keeps the last 200). */
export const MAX_BUFFERED_LINES = 200;

/** `ctx.log` lines of one attempt, sent together at most once per interval. */
export class AttemptLogBuffer {
  private lines: LogLine[] = [];
  private timer: unknown = null;
  private ended = false;

  /**
   * @param send posts one batch; expected never to reject (failures are the caller's to log)
   * @param intervalMs the longest a line waits before it is sent
   */
  constructor(
    private readonly send: (lines: LogLine[]) => Promise<void>,
    private readonly clock: WorkerClock,
    private readonly intervalMs = REPORT_INTERVAL_MS,
  ) {}

  /** Holds a line for the next batch (ignored after {@link end}). */
  add(line: LogLine): void {
    if (this.ended) return;
    if (this.lines.length >= MAX_BUFFERED_LINES) this.lines.shift();
    this.lines.push(line);
    this.timer ??= this.clock.setTimeout(() => void this.flush(), this.intervalMs);
  }

  /** Sends what is held now. */
  flush(): Promise<void> {
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
    if (this.lines.length === 0) return Promise.resolve();
    const batch = this.lines;
    this.lines = [];
    return this.send(batch);
  }

  /** Sends the last lines and takes no more. */
  end(): Promise<void> {
    this.ended = true;
    return this.flush();
  }
}

/**
 * Checks a progress value as the scheduler does (`src/domain/progress.ts`; the SDK stands alone,
 * so the rule is written here again and a test holds the two to the same answers): a fraction in
 * [0, 1], or `{done?, total?, message?}` with at least one of them and nothing else, non-negative
 * counts, `done` ≤ `total`, a message of at most 200 characters. So a wrong call fails in the
 * handler, not later as a report the scheduler refuses.
 * @throws TypeError naming what is wrong
 */
export function assertProgressValue(value: unknown): asserts value is ProgressValue {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0 || value > 1) throw new TypeError(`progress must be a number from 0 to 1, got ${value}`);
    return;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new TypeError('progress must be a number from 0 to 1 or an object {done?, total?, message?}');
  const v = value as Record<string, unknown>;
  const keys = Object.keys(v);
  if (keys.length === 0) throw new TypeError('progress needs at least one of done, total, message');
  const extra = keys.find((k) => k !== 'done' && k !== 'total' && k !== 'message');
  if (extra !== undefined) throw new TypeError(`progress has an unknown field "${extra.slice(0, 50)}" (allowed: done, total, message)`);
  for (const key of ['done', 'total']) {
    const n = v[key];
    if (key in v && (typeof n !== 'number' || !Number.isFinite(n) || n < 0))
      throw new TypeError(`progress.${key} must be a non-negative number`);
  }
  if (typeof v.done === 'number' && typeof v.total === 'number' && v.done > v.total)
    throw new TypeError('progress.done must not exceed total');
  if ('message' in v && (typeof v.message !== 'string' || v.message.length > MAX_PROGRESS_MESSAGE))
    throw new TypeError(`progress.message must be a string of at most ${MAX_PROGRESS_MESSAGE} characters`);
}

/** Longest progress `message` the scheduler takes, in characters (UTF-16 code units, as it counts them). */
const MAX_PROGRESS_MESSAGE = 200;

/** `ctx.progress` of one attempt: the latest value, sent at most once per interval. */
export class ProgressSender {
  private latest: ProgressValue | undefined = undefined;
  private timer: unknown = null;
  private lastSentAt = Number.NEGATIVE_INFINITY;
  private ended = false;

  /** @param send posts one value; expected never to reject */
  constructor(
    private readonly send: (value: ProgressValue) => Promise<void>,
    private readonly clock: WorkerClock,
    private readonly intervalMs = REPORT_INTERVAL_MS,
  ) {}

  /** Keeps `value` as the one to send next. @throws TypeError for a value the scheduler would refuse */
  report(value: ProgressValue): void {
    assertProgressValue(value);
    if (this.ended) return;
    this.latest = value;
    if (this.timer !== null) return;
    const wait = Math.max(0, this.lastSentAt + this.intervalMs - this.clock.now());
    this.timer = this.clock.setTimeout(() => this.sendLatest(), wait);
  }

  /**
   * Sends at once a value still waiting for its interval (the attempt is ending: its last progress
   * goes out before the completion, which would make it too late). @returns when that send settled
   */
  flush(): Promise<void> {
    if (this.ended || this.timer === null || this.latest === undefined) return Promise.resolve();
    this.clock.clearTimeout(this.timer);
    this.timer = null;
    const value = this.latest;
    this.latest = undefined;
    this.lastSentAt = this.clock.now();
    return this.send(value);
  }

  /** Drops a value not yet sent (the attempt is over). */
  end(): void {
    this.ended = true;
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
    this.latest = undefined;
  }

  private sendLatest(): void {
    this.timer = null;
    const value = this.latest;
    this.latest = undefined;
    if (value === undefined || this.ended) return;
    this.lastSentAt = this.clock.now();
    void this.send(value);
  }
}
