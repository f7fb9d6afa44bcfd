/**
 * The consuming side of a peer (BullMQ, Agenda, graphile-worker or pg-boss; the PostgreSQL ones
 * in ./pg-consumers.ts) in its own process, as a user would deploy it:
 * the bench forks this file with one JSON argument (WorkerConfig) and drives it over IPC.
 *
 * Protocol (parent → child): `{cmd: 'warmup', queue, expect}` (BullMQ only) runs a second worker
 * with the same settings on `queue` until `expect` jobs completed there, closes it and answers
 * `{ev: 'warmed'}`: the bench's warm-up, in the process that then consumes the measured queue;
 * `{cmd: 'start', expect}` starts processing (BullMQ `worker.run()`,
 * Agenda `start()`) and arms the completion target; `{cmd: 'report'}` asks for the start
 * lateness of every job that carried a due time; `{cmd: 'stop'}` closes and exits.
 * Child → parent: `{ev: 'ready'}` once connected, `{ev: 'started', at}`, `{ev: 'progress',
 * completed, failed}` every 100 ms while processing, `{ev: 'done', at, completed}` the moment
 * `expect` jobs have completed (at = Date.now() ms, the machine's one clock; for the PostgreSQL
 * peers once their database shows them completed, with `handler_at` the in-process instant), `{ev: 'report',
 * lateness_ms, early}`, `{ev: 'error', message}`.
 *
 * The handler is a no-op that records `Date.now() − data.due` (ms) when the job carries `due`
 * (herd scenario): that is how late the job started, by the same clock the producer used.
 */
import { Job, Worker } from 'bullmq';
import { loadAgenda } from './load-agenda';
import { Consumer, graphileConsumer, PgConsumerConfig, pgbossConsumer } from './pg-consumers';

/** Everything the child needs, passed as argv[2] (JSON). */
export interface WorkerConfig extends PgConsumerConfig {
  system: 'bullmq' | 'agenda' | 'graphile' | 'pgboss';
  redisUrl: string;
  /** BullMQ queue name, or the Agenda key prefix: one per scenario, so every scenario starts empty. */
  namespace: string;
  /** BullMQ worker concurrency; Agenda defaultConcurrency and maxConcurrency. */
  concurrency: number;
  /** Agenda processEvery (ms). */
  processEveryMs: number;
  /** Agenda lockLimit and defaultLockLimit (0 = no limit). */
  lockLimit: number;
}

type Msg = { cmd: 'warmup'; queue: string; expect: number } | { cmd: 'start'; expect: number } | { cmd: 'report' } | { cmd: 'stop' };

function send(m: Record<string, unknown>): void {
  process.send?.(m);
}

async function main(): Promise<void> {
  const cfg = JSON.parse(process.argv[2] ?? '{}') as WorkerConfig;
  const lateness: number[] = [];
  let completed = 0;
  let failed = 0;
  let expect = Infinity;
  let doneSent = false;
  const onStart = (data: unknown) => {
    const due = (data as { due?: number } | null)?.due;
    if (typeof due === 'number') lateness.push(Date.now() - due);
  };
  let consumer: Consumer | null = null;
  const onComplete = () => {
    completed++;
    if (doneSent || completed < expect) return;
    doneSent = true;
    const handlerAt = Date.now();
    if (!consumer?.confirm) return send({ ev: 'done', at: handlerAt, completed });
    consumer.confirm(expect, 120_000).then(
      () => send({ ev: 'done', at: Date.now(), handler_at: handlerAt, completed }),
      (err: Error) => send({ ev: 'error', message: `confirm: ${err.message}` }),
    );
  };
  const onFail = () => failed++;
  const hooks = { onStart, onComplete, onFail, onError: (message: string) => send({ ev: 'error', message }) };
  consumer =
    cfg.system === 'bullmq'
      ? await bullConsumer(cfg, onStart, onComplete, onFail)
      : cfg.system === 'agenda'
        ? await agendaConsumer(cfg, onStart, onComplete, onFail)
        : cfg.system === 'graphile'
          ? await graphileConsumer(cfg, hooks)
          : await pgbossConsumer(cfg, hooks);
  const c = consumer;
  let ticker: NodeJS.Timeout | null = null;
  process.on('message', (m: Msg) => {
    if (m.cmd === 'warmup') {
      bullWarmup(cfg, m.queue, m.expect).then(
        () => send({ ev: 'warmed' }),
        (err: Error) => send({ ev: 'error', message: `warmup: ${err.message}` }),
      );
    } else if (m.cmd === 'start') {
      expect = m.expect;
      ticker = setInterval(() => send({ ev: 'progress', completed, failed }), 100);
      send({ ev: 'started', at: Date.now() });
      c.run().catch((err: Error) => send({ ev: 'error', message: `run: ${err.message}` }));
    } else if (m.cmd === 'report') {
      send({ ev: 'report', lateness_ms: lateness, early: lateness.filter((l) => l < 0).length, completed, failed });
    } else if (m.cmd === 'stop') {
      if (ticker) clearInterval(ticker);
      c.close().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    }
  });
  process.on('disconnect', () => process.exit(0)); // the bench went away
  send({ ev: 'ready' });
}

/** A BullMQ Worker created with autorun false; run() starts consuming. */
async function bullConsumer(
  cfg: WorkerConfig,
  onStart: (d: unknown) => void,
  onComplete: () => void,
  onFail: () => void,
): Promise<Consumer> {
  const worker = new Worker(
    cfg.namespace,
    async (job: Job) => {
      onStart(job.data);
    },
    { connection: { url: cfg.redisUrl, maxRetriesPerRequest: null }, concurrency: cfg.concurrency, autorun: false },
  );
  worker.on('completed', onComplete);
  worker.on('failed', onFail);
  worker.on('error', (err) => send({ ev: 'error', message: `bullmq worker: ${err.message}` }));
  await worker.waitUntilReady();
  return { run: () => worker.run(), close: () => worker.close() };
}

/** A BullMQ Worker like the measured one, on `queue`, until `expect` no-op jobs completed there; then closed. */
async function bullWarmup(cfg: WorkerConfig, queue: string, expect: number): Promise<void> {
  let completed = 0;
  let reached: () => void = () => undefined;
  let broke: (err: Error) => void = () => undefined;
  const done = new Promise<void>((resolve, reject) => ((reached = resolve), (broke = reject)));
  const worker = new Worker(queue, async () => undefined, {
    connection: { url: cfg.redisUrl, maxRetriesPerRequest: null },
    concurrency: cfg.concurrency,
  });
  worker.on('completed', () => {
    if (++completed >= expect) reached();
  });
  // A no-op job that fails, or a worker error, ends the warm-up with its cause (not a time-out).
  worker.on('failed', (_job, err) => broke(new Error(`a warm-up job failed: ${err.message}`)));
  worker.on('error', (err) => broke(err));
  try {
    await done;
  } finally {
    await worker.close();
  }
}

/** An Agenda instance on the Redis backend; start() begins polling and locking jobs. */
async function agendaConsumer(
  cfg: WorkerConfig,
  onStart: (d: unknown) => void,
  onComplete: () => void,
  onFail: () => void,
): Promise<Consumer> {
  const { Agenda, RedisBackend } = loadAgenda();
  const agenda = new Agenda({
    backend: new RedisBackend({
      connectionString: cfg.redisUrl,
      keyPrefix: `${cfg.namespace}:`,
      channelName: `${cfg.namespace}:notifications`,
    }),
    processEvery: cfg.processEveryMs,
    defaultConcurrency: cfg.concurrency,
    maxConcurrency: cfg.concurrency,
    lockLimit: cfg.lockLimit,
    defaultLockLimit: cfg.lockLimit,
  });
  agenda.define('noop', async (job) => {
    onStart(job.attrs.data);
  });
  agenda.on('complete', onComplete);
  agenda.on('fail', onFail);
  agenda.on('error', (err: Error) => send({ ev: 'error', message: `agenda: ${err.message}` }));
  await agenda.ready;
  return { run: () => agenda.start(), close: () => agenda.stop() };
}

if (require.main === module) {
  main().catch((err: Error) => {
    send({ ev: 'error', message: err.stack ?? err.message });
    process.exit(1);
  });
}
