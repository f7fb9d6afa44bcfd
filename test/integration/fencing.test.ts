import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { startScheduler, Scheduler } from '../../src/bootstrap';
import { loadConfig } from '../../src/config';
import { tempDir } from '../helpers/temp-dir';

/**
 * Fencing (issue 3): a completion report for attempt 1 that arrives after attempt 2 started is
 * refused and counted, at the dispatcher and again in the store (compare-and-set on the attempt).
 */
describe('fencing: a late completion of an earlier attempt is refused', function () {
  this.timeout(30_000);
  const dir = tempDir();
  let scheduler: Scheduler;

  before(async () => {
    const flaky = path.join(dir.path, 'flaky.js');
    fs.writeFileSync(
      flaky,
      "module.exports = async (p, ctx) => { if (ctx.attempt === 1) throw new Error('attempt 1 fails');" +
        ' await new Promise((r) => setTimeout(r, 800)); return { attempt: ctx.attempt }; };\n',
    );
    const config = loadConfig({
      configDir: path.resolve(__dirname, '..', '..', '..', 'config'),
      env: {},
      overrides: { sqlitePath: path.join(dir.path, 's.db'), workers: 1, workerConcurrency: 4, partitions: 2, logLevel: 'silent', handlers: { flaky } },
    });
    scheduler = await startScheduler(config, { logger: pino({ level: 'silent' }) });
  });
  after(async () => {
    await scheduler?.close();
    dir.remove();
  });

  async function waitFor(id: string, done: (t: Record<string, any>) => boolean): Promise<Record<string, any>> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const t = await scheduler.service.get(id);
      if (done(t)) return t;
      if (Date.now() > deadline) throw new Error(`condition not reached: ${JSON.stringify(t)}`);
      await new Promise((r) => setTimeout(r, 10)); // waiting for the task's state, not for time
    }
  }

  const staleCount = async () => {
    const text = await scheduler.app.inject({ method: 'GET', url: '/metrics' }).then((r) => r.body);
    return Number(/^scheduler_stale_completions_total (\d+)/m.exec(text)?.[1] ?? 0);
  };

  it('attempt 1 reported SUCCEEDED while attempt 2 runs changes nothing; attempt 2 decides', async () => {
    const { task_id: id } = await scheduler.service.submit({ task_type: 'flaky', max_retries: 2, retry_delay_seconds: 0 });
    await waitFor(id, (t) => t.attempts === 2 && t.status === 'RUNNING');
    const before = await staleCount();
    const dispatcher = scheduler.runtime.directory.dispatcher!;
    await dispatcher.ask('completed', {
      workerId: 'worker-1',
      pid: 0,
      results: [{ id, attempt: 1, outcome: { kind: 'succeeded', result: 'forged by attempt 1' }, durationMs: 1 }],
    });
    expect(await staleCount()).to.equal(before + 1);
    expect(await scheduler.service.get(id)).to.include({ status: 'RUNNING', attempts: 2 });
    const t = await waitFor(id, (x) => x.status === 'SUCCEEDED');
    expect(t.result).to.deep.equal({ attempt: 2 });
    // and the store refuses it too (compare-and-set on id, attempt, RUNNING)
    const [res] = await scheduler.store.completeAttempts(
      [{ taskId: id, attempt: 1, state: 'SUCCEEDED', retryAt: null, result: 'forged', error: null, durationMs: 1 }],
      Date.now(),
    );
    expect(res.applied).to.equal(false);
    expect((await scheduler.service.get(id)).result).to.deep.equal({ attempt: 2 });
  });
});
