import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { terminal, useInProcessScheduler } from '../helpers/in-process-scheduler';

/**
 * A handler that leaves a rejected promise unawaited (a common bug: a call it forgot to await)
 * must not take its worker process down: by Node's default it would, losing every other attempt
 * that process runs (retried as `worker_lost`), and the buggy task would do it again at each retry.
 */
describe('worker: a promise rejection no handler awaited', function () {
  this.timeout(60_000);
  const s = useInProcessScheduler({ workers: 1, workerConcurrency: 4, partitions: 4, workerPingMs: 200 }, (dir) => {
    const floating = path.join(dir, 'floating.js');
    fs.writeFileSync(floating, "module.exports = async () => { Promise.reject(new Error('nobody awaits me')); return 'done'; };\n");
    // Runs until cancelled: it is in flight on the same process when the rejection happens.
    const hold = path.join(dir, 'hold.js');
    fs.writeFileSync(
      hold,
      "module.exports = (payload, ctx) => new Promise((resolve, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('cancelled'))));\n",
    );
    return { handlers: { floating, hold } };
  });

  it('is logged, and the process, the task that made it and the attempts running beside it go on', async () => {
    const dispatcher = s.scheduler.runtime.router.dispatcher!;
    const held = await s.scheduler.service.submit({ task_type: 'hold' });
    await s.waitFor(held.task_id, (t) => t.status === 'RUNNING');
    const pidBefore = (await dispatcher.ask('stats', null)).workers[0].pid;

    const buggy = await s.scheduler.service.submit({ task_type: 'floating', max_retries: 2, retry_delay_seconds: 0 });
    const b = await s.waitFor(buggy.task_id, terminal);
    expect(b).to.include({ status: 'SUCCEEDED', attempts: 1, result: 'done' });

    // The attempt running beside it was not lost: still its first attempt, still running.
    const h = await s.scheduler.service.get(held.task_id, { attempts: true });
    expect(h).to.include({ status: 'RUNNING', attempts: 1 });
    expect(h.attempt_history).to.deep.equal([]);
    expect((await dispatcher.ask('stats', null)).workers[0].pid).to.equal(pidBefore);

    // Counted for alerting, per worker process.
    const counted = async () =>
      /scheduler_worker_unhandled_rejections_total\{worker_id="worker-1"\} 1\b/.test(
        (await s.scheduler.app.inject({ method: 'GET', url: '/metrics' })).body,
      );
    for (let i = 0; i < 500 && !(await counted()); i++) await new Promise((r) => setTimeout(r, 10)); // waiting for the report, not for time
    expect(await counted()).to.equal(true);

    await s.scheduler.service.cancel(held.task_id);
    expect(await s.waitFor(held.task_id, terminal)).to.include({ status: 'CANCELLED', attempts: 1 });
  });
});
