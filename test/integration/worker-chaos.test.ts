import { expect } from 'chai';
import { terminal, useInProcessScheduler } from '../helpers/in-process-scheduler';
import { childPidsOf, isAlive } from '../helpers/process-files';

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

/**
 * The window between a worker process's death and the ping that sees its respawn (`workerPingMs`,
 * long here): comedy respawns the process behind the same actor reference at once, so an attempt
 * sent in that window would start in the new process, be counted lost at the ping, and run again.
 * The dispatcher sends nothing to a worker whose process it saw exit until a ping has seen the new
 * one; and a `run` meant for an earlier pid is not started by a new process.
 */
describe('chaos: a task submitted while a killed worker is being respawned', function () {
  this.timeout(60_000);
  const s = useInProcessScheduler({ workers: 1, workerConcurrency: 4, partitions: 2, workerPingMs: 4000 });

  it('runs once, in the respawned process, after the ping has seen it', async () => {
    const dispatcher = s.scheduler.runtime.router.dispatcher!;
    const victim = (await dispatcher.ask('stats', null)).workers[0];
    const children = () => childPidsOf(process.pid).filter(isAlive);
    const before = new Set(children());
    process.kill(victim.pid, 'SIGKILL');
    // the respawned process is up (a new child of this process) before the task is submitted
    for (let i = 0; i < 500 && children().every((p) => before.has(p)); i++) await new Promise((r) => setTimeout(r, 10));
    const { task_id } = await s.scheduler.service.submit({ task_type: 'sleep', payload: { ms: 5000 }, retry_delay_seconds: 0 });
    const t = await s.waitFor(task_id, terminal, 30_000);
    expect(t).to.include({ status: 'SUCCEEDED', attempts: 1 });
    expect(t.attempt_history.map((a: { outcome: string }) => a.outcome)).to.deep.equal(['SUCCEEDED']);
    const respawned = (await dispatcher.ask('stats', null)).workers[0];
    expect(respawned.pid).to.be.above(0).and.not.equal(victim.pid);
    expect(t.worker_id).to.equal(respawned.id);
  });
});
