import { expect } from 'chai';
import { terminal, useInProcessScheduler } from '../helpers/in-process-scheduler';

/** Attempt leases: heartbeats keep a long attempt alive; an attempt whose lease ends is retried. */
describe('attempt leases: heartbeat and sweeper', function () {
  this.timeout(30_000);
  const s = useInProcessScheduler({ workers: 1, workerConcurrency: 4, partitions: 2, leaseMs: 2500 });

  it('an attempt three times longer than the lease succeeds once: heartbeats extend it', async () => {
    const { task_id } = await s.scheduler.service.submit({ task_type: 'sleep', payload: { ms: 7500 } });
    expect(await s.waitFor(task_id, terminal)).to.include({ status: 'SUCCEEDED', attempts: 1 });
  });

  it('a RUNNING attempt nobody heartbeats (its process is gone) is recorded as worker_lost and runs again', async () => {
    const { scheduler } = s;
    const { task_id } = await scheduler.service.submit({
      task_type: 'echo',
      payload: 'x',
      scheduled_at: new Date(Date.now() + 60_000).toISOString(),
      retry_delay_seconds: 0,
    });
    // A ghost claims it with a short lease, as a worker of a process that then died would have.
    await scheduler.store.updateWaitingTask(task_id, { scheduledAt: null }, Date.now());
    expect(await scheduler.store.claimTasks([task_id], 'ghost-worker', Date.now(), 100)).to.have.length(1);
    // within about one sweep (leaseMs / 2), not at the next window refresh of its partition owner
    const t = await s.waitFor(task_id, terminal, 5000);
    expect(t).to.include({ status: 'SUCCEEDED', attempts: 2 });
    expect(t.attempt_history[0]).to.include({ attempt: 1, worker_id: 'ghost-worker' });
    expect(t.attempt_history[0].error.type).to.equal('worker_lost');
  });
});
