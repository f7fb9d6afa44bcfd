import { expect } from 'chai';
import path from 'node:path';
import pino from 'pino';
import { startScheduler, Scheduler } from '../../src/bootstrap';
import { loadConfig } from '../../src/config';
import { tempDir } from '../helpers/temp-dir';

/**
 * Chaos, worker (issue 3, must show 1): SIGKILL the worker process running a 5 s task. The task is
 * retried and succeeds, the other worker keeps working meanwhile, and the killed one is respawned.
 */
describe('chaos: SIGKILL of the worker running a task', function () {
  this.timeout(60_000);
  const dir = tempDir();
  let scheduler: Scheduler;

  before(async () => {
    const config = loadConfig({
      configDir: path.resolve(__dirname, '..', '..', '..', 'config'),
      env: {},
      overrides: { sqlitePath: path.join(dir.path, 's.db'), workers: 2, workerConcurrency: 4, partitions: 4, logLevel: 'silent', workerPingMs: 200 },
    });
    scheduler = await startScheduler(config, { logger: pino({ level: 'silent' }) });
  });
  after(async () => {
    await scheduler?.close();
    dir.remove();
  });

  async function waitFor(id: string, done: (t: Record<string, any>) => boolean): Promise<Record<string, any>> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const t = await scheduler.service.get(id, { attempts: true });
      if (done(t)) return t;
      if (Date.now() > deadline) throw new Error(`condition not reached: ${JSON.stringify(t)}`);
      await new Promise((r) => setTimeout(r, 20)); // waiting for the task's state, not for time
    }
  }
  const terminal = (t: Record<string, any>) => ['SUCCEEDED', 'FAILED', 'DEAD', 'CANCELLED'].includes(t.status);

  it('the task is retried and succeeds; the other worker keeps working; the killed one comes back', async () => {
    const dispatcher = scheduler.runtime.directory.dispatcher!;
    const { task_id } = await scheduler.service.submit({ task_type: 'sleep', payload: { ms: 5000 }, retry_delay_seconds: 0 });
    const running = await waitFor(task_id, (t) => t.status === 'RUNNING');
    const before = await dispatcher.ask('stats', null);
    const victim = before.workers.find((w) => w.id === running.worker_id)!;
    const survivor = before.workers.find((w) => w.id !== running.worker_id)!;
    process.kill(victim.pid, 'SIGKILL');
    // the other worker keeps working meanwhile
    const echoes = await Promise.all(Array.from({ length: 5 }, (_, i) => scheduler.service.submit({ task_type: 'echo', payload: i })));
    for (const e of echoes) expect((await waitFor(e.task_id, terminal)).status).to.equal('SUCCEEDED');
    const t = await waitFor(task_id, terminal);
    expect(t).to.include({ status: 'SUCCEEDED', attempts: 2 });
    expect(t.attempt_history[0].error.type).to.equal('worker_lost');
    const after = await dispatcher.ask('stats', null);
    expect(after.workers.find((w) => w.id === survivor.id)!.pid).to.equal(survivor.pid);
    const respawned = after.workers.find((w) => w.id === victim.id)!;
    expect(respawned.pid).to.be.above(0).and.not.equal(victim.pid);
  });
});
