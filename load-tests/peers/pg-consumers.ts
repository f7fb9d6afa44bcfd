/**
 * The consuming side of the PostgreSQL peers, for peer-worker.ts (one process per scenario):
 *
 *   graphile-worker: `run()` with a `noop` task list, `concurrency` jobs at once; `batched` adds
 *     its published batching settings (local queue of 500, completeJobBatchDelay and
 *     failJobBatchDelay 0, from worker.graphile.org/docs/performance); a job counts as completed
 *     at its `job:success` event.
 *   pg-boss: `workers` calls of `work(queue, {batchSize, pollingIntervalSeconds})`; a job counts
 *     as completed when its batch's handler has returned.
 *
 * Both libraries write a job's completion after that point without the caller awaiting it
 * (graphile's `completeJob` is batched or fire-and-forget; pg-boss's `complete` is not awaited),
 * so each consumer has `confirm(expect)`: it polls its database every 5 ms until `expect` jobs
 * are completed there (graphile deletes a completed job: its jobs table is empty; pg-boss:
 * `expect` rows in state `completed`), which the worker reports as the finish instant.
 */
import { EventEmitter } from 'node:events';
import { run as runGraphile, Runner, runMigrations, WorkerEvents } from 'graphile-worker';
import PgBoss from 'pg-boss';
import { Client } from 'pg';
import { quietGraphileLogger } from './pg-producers';

/** What the PostgreSQL consumers read from the worker's configuration. */
export interface PgConsumerConfig {
  system: string;
  /** URL of the scenario's own database. */
  pgUrl?: string;
  concurrency: number;
  /** graphile_batched: the published batching settings on. */
  graphileBatched?: boolean;
  /** pg-boss `work()` batchSize. */
  pgbossBatchSize?: number;
  /** pg-boss `work()` pollingIntervalSeconds, in ms (≥ 500). */
  pgbossPollingMs?: number;
  /** pg-boss `work()` calls (its concurrency: each polls and runs one batch at a time). */
  pgbossWorkers?: number;
}

/** Callbacks into the worker's counters: a job started (its data), completed, failed. */
export interface ConsumerHooks {
  onStart: (data: unknown) => void;
  onComplete: () => void;
  onFail: () => void;
  onError: (message: string) => void;
}

export interface Consumer {
  run(): Promise<void>;
  close(): Promise<void>;
  /** Resolves once `expect` jobs are completed in the store (not only in the process). */
  confirm?(expect: number, timeoutMs: number): Promise<void>;
}

/** The pg-boss queue of every scenario (each has a database of its own). */
export const PGBOSS_QUEUE = 'noop';

/** Polls `count()` every 5 ms until it reaches `expect`; throws after `timeoutMs`. */
async function pollUntil(url: string, sql: string, params: unknown[], expect: number, timeoutMs: number): Promise<void> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { rows } = await c.query<{ n: number }>(sql, params);
      if (rows[0].n >= expect) return;
      if (Date.now() > deadline) throw new Error(`only ${rows[0].n} of ${expect} completions committed after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 5));
    }
  } finally {
    await c.end();
  }
}

/** graphile-worker on the scenario's database; run() starts the pool. */
export async function graphileConsumer(cfg: PgConsumerConfig, h: ConsumerHooks): Promise<Consumer> {
  const url = cfg.pgUrl as string;
  await runMigrations({ connectionString: url, logger: quietGraphileLogger });
  const events: WorkerEvents = new EventEmitter();
  events.on('job:success', () => h.onComplete());
  events.on('job:failed', () => h.onFail());
  events.on('pool:listen:error', ({ error }) => h.onError(`graphile listen: ${(error as Error).message}`));
  let runner: Runner | null = null;
  const worker = cfg.graphileBatched ? { localQueue: { size: 500 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 } : {};
  return {
    async run() {
      runner = await runGraphile({
        connectionString: url,
        concurrency: cfg.concurrency,
        // One connection per running job plus the pool's own (the published set-up: 24 jobs, 25 connections).
        maxPoolSize: cfg.concurrency + 1,
        noHandleSignals: true,
        logger: quietGraphileLogger,
        events,
        taskList: {
          noop: async (payload) => {
            h.onStart(payload);
          },
        },
        preset: { worker },
      });
    },
    async close() {
      await runner?.stop();
    },
    async confirm(expect, timeoutMs) {
      // Completed jobs are deleted: every job of the scenario is done when none is left.
      await pollUntil(
        url,
        'select (case when exists (select 1 from graphile_worker._private_jobs) then 0 else $1::int end) as n',
        [expect],
        expect,
        timeoutMs,
      );
    },
  };
}

/** pg-boss on the scenario's database (its defaults: maintenance on); run() starts the work() loops. */
export async function pgbossConsumer(cfg: PgConsumerConfig, h: ConsumerHooks): Promise<Consumer> {
  const url = cfg.pgUrl as string;
  const workers = cfg.pgbossWorkers ?? 1;
  const boss = new PgBoss({ connectionString: url, max: Math.max(10, workers + 2) });
  boss.on('error', (err: Error) => h.onError(`pg-boss: ${err.message}`));
  await boss.start();
  await boss.createQueue(PGBOSS_QUEUE);
  return {
    async run() {
      const opts = { batchSize: cfg.pgbossBatchSize ?? 1, pollingIntervalSeconds: (cfg.pgbossPollingMs ?? 2000) / 1000 };
      for (let i = 0; i < workers; i++)
        await boss.work(PGBOSS_QUEUE, opts, async (jobs: PgBoss.Job<unknown>[]) => {
          for (const j of jobs) h.onStart(j.data);
          // Counted once the handler is done, as pg-boss then completes the batch (not awaited).
          setImmediate(() => jobs.forEach(() => h.onComplete()));
        });
    },
    async close() {
      await boss.stop({ graceful: false, wait: true });
    },
    async confirm(expect, timeoutMs) {
      await pollUntil(
        url,
        `select count(*)::int as n from pgboss.job where name = $1 and state = 'completed'`,
        [PGBOSS_QUEUE],
        expect,
        timeoutMs,
      );
    },
  };
}
