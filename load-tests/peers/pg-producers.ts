/**
 * The producing side of the PostgreSQL peers, in the bench process: graphile-worker
 * `WorkerUtils.addJobs` and pg-boss `insert`, each in chunks of `batch` jobs with `inFlight`
 * calls at once (as BullMQ's addBulk and our batch requests). `ready()` installs the peer's
 * schema in the scenario's fresh database (graphile `migrate()`, pg-boss `start()` +
 * `createQueue`), so that neither the connection nor the schema is timed as enqueueing.
 */
import { Logger, makeWorkerUtils, WorkerUtils } from 'graphile-worker';
import PgBoss from 'pg-boss';
import { checkAborted, mapLimit } from '../bench/run-control';
import type { Producer } from './peer-producers';

/** Splits n into chunks of at most `size`. */
function chunks(n: number, size: number): number[] {
  const out: number[] = [];
  for (let left = n; left > 0; left -= size) out.push(Math.min(size, left));
  return out;
}

/** graphile-worker's logger with only warnings and errors, on stderr (no line per job). */
export const quietGraphileLogger = new Logger(() => (level, message) => {
  if (level === 'error' || level === 'warning') process.stderr.write(`[graphile-worker] ${level}: ${message}\n`);
});

/** graphile-worker: `addJobs` of `batch` jobs (task `noop`), `inFlight` calls at once; `runAt` for a due instant. */
export class GraphileProducer implements Producer {
  private utils: WorkerUtils | null = null;

  constructor(
    private readonly url: string,
    private readonly batch: number,
    private readonly inFlight: number,
  ) {}

  async ready(): Promise<void> {
    this.utils = await makeWorkerUtils({
      connectionString: this.url,
      maxPoolSize: Math.max(10, this.inFlight),
      logger: quietGraphileLogger,
    });
    await this.utils.migrate();
  }

  async enqueue(n: number, dueAtMs?: number): Promise<void> {
    const utils = this.utils;
    if (!utils) throw new Error('GraphileProducer: ready() first');
    const runAt = dueAtMs === undefined ? undefined : new Date(dueAtMs);
    const payload = dueAtMs === undefined ? {} : { due: dueAtMs };
    await mapLimit(chunks(n, this.batch), this.inFlight, async (size) => {
      checkAborted();
      await utils.addJobs(Array.from({ length: size }, () => ({ identifier: 'noop', payload, runAt })));
    });
  }

  async close(): Promise<void> {
    await this.utils?.release();
  }
}

/** pg-boss: `insert` of `batch` jobs on queue `queue`, `inFlight` calls at once; `startAfter` for a due instant. */
export class PgBossProducer implements Producer {
  private readonly boss: PgBoss;

  constructor(
    url: string,
    private readonly queue: string,
    private readonly batch: number,
    private readonly inFlight: number,
  ) {
    // The producer does no maintenance and no cron: the consumer's instance does (its defaults).
    this.boss = new PgBoss({ connectionString: url, max: Math.max(10, inFlight), supervise: false, schedule: false });
    this.boss.on('error', (err: Error) => process.stderr.write(`[pg-boss producer] ${err.message}\n`));
  }

  async ready(): Promise<void> {
    await this.boss.start();
    await this.boss.createQueue(this.queue);
  }

  async enqueue(n: number, dueAtMs?: number): Promise<void> {
    const startAfter = dueAtMs === undefined ? undefined : new Date(dueAtMs);
    const data = dueAtMs === undefined ? {} : { due: dueAtMs };
    await mapLimit(chunks(n, this.batch), this.inFlight, async (size) => {
      checkAborted();
      await this.boss.insert(Array.from({ length: size }, () => ({ name: this.queue, data, startAfter })));
    });
  }

  async close(): Promise<void> {
    await this.boss.stop({ graceful: false, wait: true });
  }
}
