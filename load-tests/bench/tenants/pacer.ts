/**
 * A steady trickle of single submissions: one `POST /api/v1/tasks` every `intervalMs`, task i at
 * its slot time `t0 + i × intervalMs` (the loop sleeps to the next slot and sends every slot that
 * has come, so a late timer sends a short burst rather than drifting). Runs until stop() is
 * called, then waits for the requests in flight. Used for the small tenant of the fairness
 * scenario: it measures what one tenant's backlog does to another tenant's tasks.
 */
import { performance } from 'node:perf_hooks';
import { HttpClient, retryAfterMs } from '../http-client';
import { checkAborted, sleep } from '../run-control';
import { distribution, round } from '../stats';

/** One acknowledged task of the trickle. */
export interface PacedTask {
  task_id: string;
  slot: number;
  sent_wall: number; // Date.now() when it was sent
  ack_ms: number; // HTTP round trip of the acknowledged request (ms)
}

/** The trickle: start(), stop(), then the acknowledged `tasks` and summary(). */
export class Pacer {
  readonly tasks: PacedTask[] = [];
  readonly errors: string[] = [];
  private readonly ackLat: number[] = [];
  private readonly sendLate: number[] = [];
  private readonly pending: Array<Promise<void>> = [];
  private stopped = false;
  private loop: Promise<void> | null = null;
  private throttled = 0;
  private t0 = 0;
  private lastSend = 0;
  /** Submissions sent so far (acknowledged or not): an upper bound on the tasks it made. */
  sent = 0;

  /**
   * @param client the client for this trickle only (its own sockets, so its requests do not queue
   *   behind another tenant's batch requests in the harness)
   * @param body the JSON body of every submission
   * @param intervalMs time between two slots (ms)
   */
  constructor(
    private readonly client: HttpClient,
    private readonly body: string,
    readonly intervalMs: number,
  ) {}

  start(): void {
    this.t0 = performance.now();
    this.loop = this.run();
    this.loop.catch(() => undefined); // observed by stop()
  }

  /** Stops sending, waits for the requests in flight. @throws the loop's error (the run's abort) */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
    await Promise.all(this.pending);
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      checkAborted();
      const now = performance.now();
      const due = Math.floor((now - this.t0) / this.intervalMs) + 1;
      for (; this.sent < due; this.sent++) {
        this.sendLate.push(now - (this.t0 + this.sent * this.intervalMs));
        this.pending.push(this.sendOne(this.sent));
      }
      this.lastSend = now;
      if (this.errors.length > 100) throw new Error(`paced submissions: too many failures, e.g. ${this.errors[0]}`);
      await sleep(this.t0 + this.sent * this.intervalMs - performance.now());
    }
  }

  private async sendOne(slot: number): Promise<void> {
    const sentWall = Date.now();
    try {
      for (let tries = 0; ; tries++) {
        const s = performance.now();
        const res = await this.client.request('POST', '/api/v1/tasks', this.body, 30_000);
        if (res.status === 202) {
          const ackMs = performance.now() - s;
          this.ackLat.push(ackMs);
          this.tasks.push({ task_id: (JSON.parse(res.body) as { task_id: string }).task_id, slot, sent_wall: sentWall, ack_ms: ackMs });
          return;
        }
        if ((res.status === 429 || res.status === 503) && tries < 20) {
          this.throttled++;
          await sleep(retryAfterMs(res));
          continue;
        }
        this.errors.push(`slot ${slot}: HTTP ${res.status} ${res.body.slice(0, 200)}`);
        return;
      }
    } catch (err) {
      this.errors.push(`slot ${slot}: ${(err as Error).message}`);
    }
  }

  /** The JSON summary: counts, achieved rate, how late sends were against their slots, ack latency. */
  summary(): Record<string, unknown> {
    const span = (this.lastSend - this.t0) / 1000;
    return {
      interval_ms: this.intervalMs,
      sent: this.sent,
      acknowledged: this.tasks.length,
      failed_submissions: this.errors.length,
      first_errors: this.errors.slice(0, 5),
      throttled_responses: this.throttled,
      seconds: round(span, 2),
      achieved_rate_per_s: round(span > 0 ? (this.sent - 1) / span : null, 1),
      send_lateness_vs_slot: distribution(this.sendLate),
      ack_latency: distribution(this.ackLat),
    };
  }
}
