import { expect } from 'chai';
import { terminal, useInProcessScheduler } from '../helpers/in-process-scheduler';

/** Reads one sample of the Prometheus text (`null` when absent). */
function sample(text: string, name: string): number | null {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? null : Number(line.slice(name.length + 1));
}

/**
 * `scheduler_last_task_finished_timestamp_seconds`: when this node last had an attempt that ended
 * its task committed (what load-tests/peers reads as "the last job finished", as BullMQ's bench
 * figure is its 'completed' event). It moves with tasks that end, not with a retry.
 */
describe('metrics: the instant the last task finished', function () {
  this.timeout(30_000);
  const s = useInProcessScheduler({ workers: 1, workerConcurrency: 4, partitions: 4 });
  const scrape = async () => (await s.scheduler.app.inject({ method: 'GET', url: '/metrics' })).body;
  /** The gauge in epoch ms (it is exported in seconds with ms resolution). */
  const gauge = async () => Math.round(sample(await scrape(), 'scheduler_last_task_finished_timestamp_seconds')! * 1000);
  /**
   * The gauge once it has reached `ms`, or its last reading after 5 s. A task reads as ended as
   * soon as its end is committed; the dispatcher sets the gauge when the writer's answer reaches
   * it, an event-loop turn or more later, so the test waits for that event.
   */
  const gaugeReaching = async (ms: number) => {
    const deadline = Date.now() + 5_000;
    for (;;) {
      const g = await gauge();
      if (g >= ms || Date.now() > deadline) return g;
      await new Promise((r) => setTimeout(r, 10)); // polling for the dispatcher's update, not timing logic
    }
  };

  it('is 0 before any task ends, then the commit instant of the latest end; a retry does not move it', async () => {
    expect(await gauge()).to.equal(0);
    const before = Date.now();
    const { task_id } = await s.scheduler.service.submit({ task_type: 'echo', payload: 1 });
    const t = await s.waitFor(task_id, terminal);
    const first = await gaugeReaching(Date.parse(t.completed_at as string));
    // Read after the end's commit answered: not before the attempt's recorded end, not in the future.
    expect(first)
      .to.be.at.least(Date.parse(t.completed_at as string))
      .and.at.least(before)
      .and.at.most(Date.now());

    // An attempt that ends in a retry is not a finished task.
    const flaky = await s.scheduler.service.submit({
      task_type: 'fail',
      payload: { times: 1 },
      retry_delay_seconds: 30,
      retry_jitter: false,
    });
    await s.waitFor(flaky.task_id, (x) => x.status === 'RETRYING');
    expect(await gauge()).to.equal(first);

    const second = await s.scheduler.service.submit({ task_type: 'noop' });
    const t2 = await s.waitFor(second.task_id, terminal);
    expect(await gaugeReaching(Date.parse(t2.completed_at as string)))
      .to.be.at.least(Date.parse(t2.completed_at as string))
      .and.at.least(first)
      .and.at.most(Date.now());
  });
});
