/**
 * Example external consumer of an external queue (config `externalQueues`; docs/API.md, "External
 * queues"). It reads the queue's Redis stream in the consumer group with XREADGROUP BLOCK, runs a
 * trivial handler per entry, reports the outcome with `POST /api/v1/tasks/{id}/complete`, then
 * acknowledges the entry (XACK). A report answered 409 (the attempt is no longer current: its
 * lease expired and it was retried, or the task was cancelled) or 404 (the task is gone) is
 * acknowledged too: the work is dropped. Any other failure leaves the entry unacknowledged: the
 * attempt's lease runs out and the scheduler retries the task as a new attempt.
 *
 * Run (after `npm run build`):
 *   REDIS_URL=redis://127.0.0.1:6379 SCHEDULER_URL=http://127.0.0.1:8080 \
 *   STREAM=scheduler:queue:emails node dist/examples/stream-consumer.js
 * Environment: `REDIS_URL`, `SCHEDULER_URL`, `STREAM` (required); `GROUP` (default `scheduler`),
 * `CONSUMER` (default `consumer-<pid>`), `BATCH` (entries per read, default 16), `API_KEY` (Bearer
 * key when the API has keys), `STALL=1` (read entries and never report them: simulates a consumer
 * that dies mid-batch; used by the tests).
 *
 * The handler: a payload `{fail: "message", permanent?: true}` fails the attempt; anything else
 * succeeds with `{echo: payload, consumer}`.
 */
import Redis from 'ioredis';

export interface ConsumerOptions {
  redisUrl: string;
  schedulerUrl: string;
  stream: string;
  group: string;
  consumer: string;
  batch: number;
  apiKey?: string;
  /** Read entries and never report them (a consumer that hangs or dies mid-batch). */
  stall?: boolean;
  /** Called after each entry is reported (HTTP status of the report). */
  onReported?: (taskId: string, status: number) => void;
}

/** One stream entry's fields as an object. */
function fieldsOf(list: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < list.length; i += 2) out[list[i]] = list[i + 1];
  return out;
}

/** The trivial handler of this example. */
async function handle(taskType: string, payload: unknown, consumer: string): Promise<unknown> {
  const p = payload as { fail?: string; permanent?: boolean } | null;
  if (p && typeof p === 'object' && typeof p.fail === 'string') {
    throw Object.assign(new Error(p.fail), { permanent: p.permanent === true });
  }
  return { echo: payload, task_type: taskType, consumer };
}

/**
 * Runs the consumer until `signal` aborts. Reads at most `batch` entries at a time (blocking up to
 * 1 s), handles them concurrently, reports each, and XACKs what the scheduler answered.
 */
export async function runConsumer(options: ConsumerOptions, signal: AbortSignal): Promise<void> {
  const redis = new Redis(options.redisUrl, { maxRetriesPerRequest: 3 });
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
  const stop = () => redis.disconnect();
  signal.addEventListener('abort', stop, { once: true });
  try {
    while (!signal.aborted) {
      let reply: Array<[string, Array<[string, string[]]>]> | null;
      try {
        reply = (await redis.xreadgroup(
          'GROUP',
          options.group,
          options.consumer,
          'COUNT',
          options.batch,
          'BLOCK',
          1000,
          'STREAMS',
          options.stream,
          '>',
        )) as typeof reply;
      } catch (err) {
        if (signal.aborted) return;
        throw err;
      }
      if (!reply || options.stall) continue;
      const entries = reply.flatMap(([, list]) => list);
      await Promise.all(
        entries.map(async ([entryId, list]) => {
          const f = fieldsOf(list);
          const attempt = Number(f.attempt);
          let report: Record<string, unknown>;
          try {
            report = { attempt, result: await handle(f.task_type, JSON.parse(f.payload ?? 'null'), options.consumer) };
          } catch (err) {
            const e = err as Error & { permanent?: boolean };
            report = { attempt, error: { message: e.message, permanent: e.permanent === true } };
          }
          let status = 0;
          try {
            const res = await fetch(`${options.schedulerUrl}/api/v1/tasks/${encodeURIComponent(f.task_id)}/complete`, {
              method: 'POST',
              headers,
              body: JSON.stringify(report),
            });
            status = res.status;
            await res.arrayBuffer();
          } catch {
            return; // scheduler unreachable: leave the entry pending; the lease retries the task
          }
          if (status === 200 || status === 404 || status === 409) await redis.xack(options.stream, options.group, entryId);
          options.onReported?.(f.task_id, status);
        }),
      );
    }
  } finally {
    signal.removeEventListener('abort', stop);
    redis.disconnect();
  }
}

function required(name: string): string {
  const v = process.env[name];
  if (!v) {
    console.error(`stream-consumer: environment variable ${name} is required`);
    process.exit(2);
  }
  return v;
}

if (require.main === module) {
  const controller = new AbortController();
  process.once('SIGTERM', () => controller.abort());
  process.once('SIGINT', () => controller.abort());
  runConsumer(
    {
      redisUrl: required('REDIS_URL'),
      schedulerUrl: required('SCHEDULER_URL'),
      stream: required('STREAM'),
      group: process.env.GROUP ?? 'scheduler',
      consumer: process.env.CONSUMER ?? `consumer-${process.pid}`,
      batch: Number(process.env.BATCH ?? 16),
      apiKey: process.env.API_KEY,
      stall: process.env.STALL === '1',
    },
    controller.signal,
  ).then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
