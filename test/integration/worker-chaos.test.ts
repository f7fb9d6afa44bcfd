import { expect } from 'chai';
import { terminal, useInProcessScheduler } from '../helpers/in-process-scheduler';

/**
 * Chaos, worker (issue 3, must show 1): SIGKILL the worker process running a 5 s task. The task is
 * retried and succeeds, the other worker keeps working meanwhile, and the killed one is respawned.
 */
describe('chaos: SIGKILL of the worker running a task', function () {
  this.timeout(60_000);
  const s = useInProcessScheduler({ workers: 2, workerConcurrency: 4, partitions: 4, workerPingMs: 200 });

  it('the task is retried and succeeds; the other worker keeps working; the killed one comes back', async () => {
    const dispatcher = s.scheduler.runtime.router.dispatcher!;
    const { task_id } = await s.scheduler.service.submit({ task_type: 'sleep', payload: { ms: 5000 }, retry_delay_seconds: 0 });
    const running = await s.waitFor(task_id, (t) => t.status === 'RUNNING');
    const before = await dispatcher.ask('stats', null);
    const victim = before.workers.find((w) => w.id === running.worker_id)!;
    const survivor = before.workers.find((w) => w.id !== running.worker_id)!;
    process.kill(victim.pid, 'SIGKILL');
    // the other worker keeps working meanwhile
    const echoes = await Promise.all(Array.from({ length: 5 }, (_, i) => s.scheduler.service.submit({ task_type: 'echo', payload: i })));
    for (const e of echoes) expect((await s.waitFor(e.task_id, terminal)).status).to.equal('SUCCEEDED');
    const t = await s.waitFor(task_id, terminal);
    expect(t).to.include({ status: 'SUCCEEDED', attempts: 2 });
    expect(t.attempt_history[0].error.type).to.equal('worker_lost');
    const after = await dispatcher.ask('stats', null);
    expect(after.workers.find((w) => w.id === survivor.id)!.pid).to.equal(survivor.pid);
    const respawned = after.workers.find((w) => w.id === victim.id)!;
    expect(respawned.pid).to.be.above(0).and.not.equal(victim.pid);
  });
});
