/**
 * Example pull worker (docs/WORKERS.md): runs the tasks of a pull queue in this process with
 * `createWorker`. An application imports it as `actor-task-scheduler/worker`; this example, inside
 * the repository, imports the same module by path.
 *
 * The scheduler's config names the queue: `"externalQueues": {"emails": {"transport": "http"}}`.
 * Run (after `npm run build`):
 *   SCHEDULER_URL=http://127.0.0.1:8080 QUEUE=emails node dist/examples/pull-worker.js
 * Environment: `SCHEDULER_URL`, `QUEUE` (default `emails`), `CONCURRENCY` (default 4), `API_KEY`
 * (an admin key when the API has keys). SIGINT or SIGTERM closes it gracefully (10 s at most).
 *
 * The handler `send_email` takes `{to, subject}`: without `to` it fails permanently; it saves a
 * checkpoint, reports progress, and answers `{sent_to, key}` (the idempotency key a real mailer
 * would pass on, so a re-run after a lost report sends nothing twice).
 */
import { createWorker, PermanentError } from '../src/sdk/worker';

const worker = createWorker({
  url: process.env.SCHEDULER_URL ?? 'http://127.0.0.1:8080',
  apiKey: process.env.API_KEY,
  queue: process.env.QUEUE ?? 'emails',
  concurrency: Number(process.env.CONCURRENCY ?? 4),
  logger: console,
  handlers: {
    send_email: async (payload, ctx) => {
      const p = (payload ?? {}) as { to?: string; subject?: string };
      if (!p.to) throw new PermanentError('payload.to is missing');
      if (ctx.lastCheckpoint) ctx.log('resuming', { from: ctx.lastCheckpoint });
      ctx.progress(0.5);
      await ctx.checkpoint({ rendered: true });
      ctx.log.info('sending', { to: p.to, subject: p.subject ?? '' });
      return { sent_to: p.to, key: ctx.idempotencyKey ?? ctx.taskId };
    },
  },
});

worker.on('failed', (task, error) => console.warn(`task ${task.task_id} attempt ${task.attempt} failed: ${error.message}`));
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void worker.close({ timeoutMs: 10_000 }).then(() => process.exit(0)));
}
void worker.start().then(() => console.log(`worker ${worker.workerId} pulling ${worker.queue}`));
