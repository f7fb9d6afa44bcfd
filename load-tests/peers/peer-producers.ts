/**
 * The producing side of each peer, in the bench process (where an application would enqueue):
 * BullMQ `Queue.addBulk` in chunks, Agenda `now()` / `schedule()` one job per call (Agenda 6 has
 * no bulk insert), both with a fixed number of calls in flight. Timing is the caller's.
 */
import type { Agenda } from 'agenda';
import type { RedisBackend } from '@agendajs/redis-backend';
import { Queue } from 'bullmq';
import { checkAborted, mapLimit } from '../bench/run-control';
import { loadAgenda } from './load-agenda';

export interface Producer {
  /** Resolves once connected, so that the connection set-up is not timed as enqueueing. */
  ready(): Promise<void>;
  /**
   * Enqueues `n` no-op jobs; with `dueAtMs` (epoch ms) every job is delayed until that instant and
   * carries `{due: dueAtMs}` so the worker can measure its lateness. Resolves when all are stored.
   */
  enqueue(n: number, dueAtMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** Splits n into chunks of at most `size`. */
function chunks(n: number, size: number): number[] {
  const out: number[] = [];
  for (let left = n; left > 0; left -= size) out.push(Math.min(size, left));
  return out;
}

/** BullMQ: `addBulk` of `batch` jobs, `inFlight` calls at once (the bench's default: 1,000 × 4, as for ours). */
export class BullProducer implements Producer {
  private readonly queue: Queue;

  constructor(
    redisUrl: string,
    name: string,
    private readonly batch: number,
    private readonly inFlight: number,
  ) {
    this.queue = new Queue(name, { connection: { url: redisUrl } });
  }

  async ready(): Promise<void> {
    await this.queue.waitUntilReady();
  }

  async enqueue(n: number, dueAtMs?: number): Promise<void> {
    await mapLimit(chunks(n, this.batch), this.inFlight, async (size) => {
      checkAborted();
      const ts = Date.now();
      const opts = dueAtMs === undefined ? undefined : { timestamp: ts, delay: Math.max(0, dueAtMs - ts) };
      const data = dueAtMs === undefined ? {} : { due: dueAtMs };
      await this.queue.addBulk(Array.from({ length: size }, () => ({ name: 'noop', data, opts })));
    });
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}

/** Agenda on its Redis backend: one `now()` or `schedule()` per job, `inFlight` at once; never started. */
export class AgendaProducer implements Producer {
  private readonly agenda: Agenda;
  private readonly backend: RedisBackend;

  constructor(
    redisUrl: string,
    namespace: string,
    private readonly inFlight: number,
  ) {
    const { Agenda, RedisBackend } = loadAgenda();
    this.backend = new RedisBackend({ connectionString: redisUrl, keyPrefix: `${namespace}:`, channelName: `${namespace}:notifications` });
    this.agenda = new Agenda({ backend: this.backend });
  }

  async ready(): Promise<void> {
    await this.agenda.ready;
  }

  async enqueue(n: number, dueAtMs?: number): Promise<void> {
    const items = Array.from({ length: n }, (_, i) => i);
    await mapLimit(items, this.inFlight, async () => {
      checkAborted();
      if (dueAtMs === undefined) await this.agenda.now('noop', {});
      else await this.agenda.schedule(new Date(dueAtMs), 'noop', { due: dueAtMs });
    });
  }

  async close(): Promise<void> {
    // stop() of an Agenda that was never started leaves the backend connected.
    await this.agenda.stop();
    await this.backend.disconnect();
  }
}
