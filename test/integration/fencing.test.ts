import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { useInProcessScheduler } from '../helpers/in-process-scheduler';

/**
 * Fencing (issue 3): a completion report for attempt 1 that arrives after attempt 2 started is
 * refused and counted, at the dispatcher and again in the store (compare-and-set on the attempt).
 */
describe('fencing: a late completion of an earlier attempt is refused', function () {
  this.timeout(30_000);
  const s = useInProcessScheduler({ workers: 1, workerConcurrency: 4, partitions: 2 }, (dir) => {
    const flaky = path.join(dir, 'flaky.js');
    fs.writeFileSync(
      flaky,
      "module.exports = async (p, ctx) => { if (ctx.attempt === 1) throw new Error('attempt 1 fails');" +
        ' await new Promise((r) => setTimeout(r, 800)); return { attempt: ctx.attempt }; };\n',
    );
    return { handlers: { flaky } };
  });
  const waitFor = (id: string, done: (t: Record<string, any>) => boolean) => s.waitFor(id, done, 15_000);

  const staleCount = async () => {
    const text = await s.scheduler.app.inject({ method: 'GET', url: '/metrics' }).then((r) => r.body);
    return Number(/^scheduler_stale_completions_total (\d+)/m.exec(text)?.[1] ?? 0);
  };

  it('attempt 1 reported SUCCEEDED while attempt 2 runs changes nothing; attempt 2 decides', async () => {
    const { task_id: id } = await s.scheduler.service.submit({ task_type: 'flaky', max_retries: 2, retry_delay_seconds: 0 });
    await waitFor(id, (t) => t.attempts === 2 && t.status === 'RUNNING');
    const before = await staleCount();
    const dispatcher = s.scheduler.runtime.router.dispatcher!;
    await dispatcher.ask('completed', {
      workerId: 'worker-1',
      pid: 0,
      results: [{ id, attempt: 1, outcome: { kind: 'succeeded', result: 'forged by attempt 1' }, durationMs: 1 }],
    });
    expect(await staleCount()).to.equal(before + 1);
    expect(await s.scheduler.service.get(id)).to.include({ status: 'RUNNING', attempts: 2 });
    const t = await waitFor(id, (x) => x.status === 'SUCCEEDED');
    expect(t.result).to.deep.equal({ attempt: 2 });
    // and the store refuses it too (compare-and-set on id, attempt, RUNNING)
    const [res] = await s.scheduler.store.completeAttempts(
      [{ taskId: id, attempt: 1, state: 'SUCCEEDED', retryAt: null, result: 'forged', error: null, durationMs: 1 }],
      Date.now(),
    );
    expect(res.applied).to.equal(false);
    expect((await s.scheduler.service.get(id)).result).to.deep.equal({ attempt: 2 });
  });
});
