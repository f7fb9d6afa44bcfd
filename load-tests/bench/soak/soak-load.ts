/**
 * The soak's load generators: batch submission with seqs (every task's payload carries the seq its
 * side effect is checked by), the steady tenant's paced stream (with its share of tasks that fail
 * their first attempt), a tenant flood, the workflow loop and the cron definitions. Task types
 * and seqs: effect-log.ts. Every request retries a 429/503 after Retry-After.
 */
import { performance } from 'node:perf_hooks';
import type { HttpClient } from '../http-client';
import { checkAborted, mapLimit, run as bench, sleep } from '../run-control';
import { distribution, round } from '../stats';
import { call } from '../tenants/tenants-api';
import { Kind, SeqBook, taskType } from './effect-log';

/** Counters shared by the generators. */
export interface LoadCounters {
  throttled: number;
  requests: number;
  errors: string[];
}

/** One task of a batch: its kind, tenant and the fields beyond type, payload and metadata. */
interface BatchItem {
  kind: Kind;
  tenant: string;
  extra?: Record<string, unknown>;
}

/**
 * Most tasks in one batch request: the service's `batchMaxTasks` (config/default.json). A batch
 * over it is refused whole (400), so the steady stream sends a slot of more tasks as several.
 */
const BATCH_MAX_TASKS = 1000;

/** The retry settings of the tasks that fail their first attempt: one retry after 1 s. */
const RETRY_FIELDS = { max_retries: 3, retry_backoff: 'fixed', retry_delay_seconds: 1, retry_jitter: false };

/**
 * Submits `items` as one POST /api/v1/tasks/batch, each with a fresh seq in its payload.
 * @returns the acknowledged task ids in order (null when the request failed; recorded in `c.errors`
 *   and its seqs in `book.unknown`)
 */
export async function submitBatch(client: HttpClient, book: SeqBook, items: BatchItem[], c: LoadCounters): Promise<string[] | null> {
  const first = book.take(items.length);
  const tasks = items.map((it, i) => ({
    task_type: taskType(it.kind),
    payload: it.kind === 'retry' ? { seq: first + i, fail_first: true } : { seq: first + i },
    metadata: { tenant_id: it.tenant },
    ...(it.kind === 'retry' ? RETRY_FIELDS : {}),
    ...(it.extra ?? {}),
  }));
  c.requests++;
  try {
    const res = await call(client, 'POST', '/api/v1/tasks/batch', JSON.stringify({ tasks }), 202, c);
    const acks = (JSON.parse(res.body) as { tasks: Array<{ task_id: string }> }).tasks;
    items.forEach((it, i) => book.acknowledge(first + i, it.kind));
    return acks.map((a) => a.task_id);
  } catch (err) {
    checkAborted();
    for (let i = 0; i < items.length; i++) book.unknown.push(first + i);
    if (c.errors.length < 100) c.errors.push(`batch: ${(err as Error).message}`);
    return null;
  }
}

/**
 * The steady tenant S: every `batchMs` one batch of run-now `soak_steady` tasks so that the mean
 * rate is `rate` per second; a `retryFraction` share of them is replaced by `soak_retry` tasks of
 * tenant R. Slot i is due at t0 + i × batchMs; a late timer sends the slots that have come (no
 * drift). `onSteady` receives each acknowledged steady task id with its send time (Date ms).
 */
export class SteadyStream {
  private stopped = false;
  private loop: Promise<void> | null = null;
  private readonly pending = new Set<Promise<void>>();
  private readonly ackMs: number[] = [];
  private retryCarry = 0;
  private t0 = 0;
  sent = 0;
  maxInFlight = 0;
  slots = 0;

  constructor(
    private readonly client: HttpClient,
    private readonly book: SeqBook,
    private readonly c: LoadCounters,
    readonly rate: number,
    readonly batchMs: number,
    private readonly retryFraction: number,
    private readonly onSteady: (taskId: string, sentWall: number) => void,
  ) {}

  start(): void {
    this.t0 = performance.now();
    this.loop = this.run();
    // Observed by stop() at the end, and ends the run at once: an hour without the steady stream
    // measures nothing.
    this.loop.catch((err: unknown) => {
      if (!bench.signal.aborted) bench.abort(err);
    });
  }

  /** Stops sending and waits for the requests in flight. @throws the run's abort */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
    await Promise.all(this.pending);
  }

  private tasksInSlot(i: number): number {
    const per = (this.rate * this.batchMs) / 1000;
    return Math.floor(per * (i + 1)) - Math.floor(per * i);
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      checkAborted();
      const due = Math.floor((performance.now() - this.t0) / this.batchMs) + 1;
      for (; this.slots < due; this.slots++) {
        const n = this.tasksInSlot(this.slots);
        for (let k = 0; k < n; k += BATCH_MAX_TASKS) this.send(Math.min(BATCH_MAX_TASKS, n - k));
      }
      // The counters are the whole load's (steady, floods, workflows): 100 failed submissions of
      // any kind end the run, whose completeness could not be judged any more.
      if (this.c.errors.length >= 100) throw new Error(`submissions: too many failures, e.g. ${this.c.errors[0]}`);
      await sleep(this.t0 + this.slots * this.batchMs - performance.now());
    }
  }

  private send(n: number): void {
    const items: BatchItem[] = [];
    for (let i = 0; i < n; i++) {
      this.retryCarry += this.retryFraction;
      if (this.retryCarry >= 1) {
        this.retryCarry -= 1;
        items.push({ kind: 'retry', tenant: 'R' });
      } else items.push({ kind: 'steady', tenant: 'S' });
    }
    this.sent += n;
    const wall = Date.now();
    const s = performance.now();
    const p = submitBatch(this.client, this.book, items, this.c).then((ids) => {
      if (ids === null) return;
      this.ackMs.push(performance.now() - s);
      ids.forEach((id, i) => {
        if (items[i].kind === 'steady') this.onSteady(id, wall);
      });
    });
    this.pending.add(p);
    this.maxInFlight = Math.max(this.maxInFlight, this.pending.size);
    void p.finally(() => this.pending.delete(p));
  }

  /**
   * The JSON summary: tasks sent, achieved rate, batch acknowledgement latency, most in flight, and
   * `kept_up`: the service acknowledged the stream as it came (achieved ≥ 98 % of the rate, p99 of
   * the acknowledgements ≤ 1 s); false means an overloaded run, whose lag figures measure the
   * backlog, not the soak.
   */
  summary(): Record<string, unknown> {
    const s = (performance.now() - this.t0) / 1000;
    const ack = distribution(this.ackMs);
    const achieved = s > 0 ? this.sent / s : 0;
    return {
      kept_up: achieved >= 0.98 * this.rate && (ack.p99_ms ?? Infinity) <= 1000,
      rate_per_s: this.rate,
      batch_ms: this.batchMs,
      tasks_sent: this.sent,
      achieved_per_s: round(achieved, 1),
      batch_ack_latency: ack,
      max_batches_in_flight: this.maxInFlight,
    };
  }
}

/** Tenant F's flood: `n` `soak_flood` tasks in batches of 1,000 with 4 requests in flight. */
export async function flood(client: HttpClient, book: SeqBook, n: number, c: LoadCounters): Promise<{ acked: number; submit_s: number }> {
  const sizes: number[] = [];
  for (let left = n; left > 0; left -= 1000) sizes.push(Math.min(1000, left));
  const t0 = performance.now();
  const acks = await mapLimit(sizes, 4, (k) =>
    submitBatch(
      client,
      book,
      Array.from({ length: k }, () => ({ kind: 'flood' as Kind, tenant: 'F' })),
      c,
    ),
  );
  return { acked: acks.reduce((a, ids) => a + (ids?.length ?? 0), 0), submit_s: round((performance.now() - t0) / 1000, 2) as number };
}

/**
 * Submits one workflow of `layers` × `width` `soak_workflow` tasks (tenant W), each task after
 * the first layer depending on two of the layer before. @returns the tasks acknowledged (0 on failure)
 */
export async function submitWorkflow(client: HttpClient, book: SeqBook, layers: number, width: number, c: LoadCounters): Promise<number> {
  const n = layers * width;
  const first = book.take(n);
  const tasks = [];
  for (let l = 0; l < layers; l++)
    for (let i = 0; i < width; i++) {
      const deps = l === 0 ? [] : [...new Set([`${l - 1}.${i}`, `${l - 1}.${(i + 1) % width}`])];
      tasks.push({
        task_id: `${l}.${i}`,
        task_type: taskType('workflow'),
        payload: { seq: first + l * width + i },
        ...(deps.length > 0 ? { dependencies: deps } : {}),
      });
    }
  c.requests++;
  try {
    await call(client, 'POST', '/api/v1/workflows', JSON.stringify({ workflow_name: 'soak', metadata: { tenant_id: 'W' }, tasks }), 202, c);
    for (let s = first; s < first + n; s++) book.acknowledge(s, 'workflow');
    return n;
  } catch (err) {
    checkAborted();
    for (let s = first; s < first + n; s++) book.unknown.push(s);
    if (c.errors.length < 100) c.errors.push(`workflow: ${(err as Error).message}`);
    return 0;
  }
}

/**
 * `n` cron definitions of `soak_cron` (tenant C), each firing every `everyS` seconds, overlap
 * policy skip. @returns their ids
 */
export async function createCrons(client: HttpClient, n: number, everyS: number, c: LoadCounters): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const body = JSON.stringify({
      name: `soak-${i}`,
      cron_expression: `*/${everyS} * * * * *`,
      timezone: 'UTC',
      task_type: taskType('cron'),
      metadata: { tenant_id: 'C' },
      overlap_policy: 'skip',
    });
    const res = await call(client, 'POST', '/api/v1/cron-tasks', body, 201, c);
    ids.push((JSON.parse(res.body) as { cron_id: string }).cron_id);
  }
  return ids;
}
