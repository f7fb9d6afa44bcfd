import { expect } from 'chai';
import path from 'node:path';
import pino from 'pino';
import { startScheduler, Scheduler } from '../../src/bootstrap';
import { loadConfig } from '../../src/config';
import { tempDir } from '../helpers/temp-dir';

/** Attempt leases: heartbeats keep a long attempt alive; an attempt whose lease ends is retried. */
describe('attempt leases: heartbeat and sweeper', function () {
  this.timeout(30_000);
  const dir = tempDir();
  let scheduler: Scheduler;

  before(async () => {
    const config = loadConfig({
      configDir: path.resolve(__dirname, '..', '..', '..', 'config'),
      env: {},
      overrides: { sqlitePath: path.join(dir.path, 's.db'), workers: 1, workerConcurrency: 4, partitions: 2, logLevel: 'silent', leaseMs: 1200 },
    });
    scheduler = await startScheduler(config, { logger: pino({ level: 'silent' }) });
  });
  after(async () => {
    await scheduler?.close();
    dir.remove();
  });

  async function waitTerminal(id: string): Promise<Record<string, any>> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const t = await scheduler.service.get(id, { attempts: true });
      if (['SUCCEEDED', 'FAILED', 'DEAD', 'CANCELLED'].includes(t.status as string)) return t;
      if (Date.now() > deadline) throw new Error(`not terminal: ${JSON.stringify(t)}`);
      await new Promise((r) => setTimeout(r, 20)); // waiting for the task's state, not for time
    }
  }

  it('an attempt three times longer than the lease succeeds once: heartbeats extend it', async () => {
    const { task_id } = await scheduler.service.submit({ task_type: 'sleep', payload: { ms: 3600 } });
    const t = await waitTerminal(task_id);
    expect(t).to.include({ status: 'SUCCEEDED', attempts: 1 });
  });

  it('a RUNNING attempt nobody heartbeats (its process is gone) is recorded as worker_lost and runs again', async () => {
    const { task_id } = await scheduler.service.submit({ task_type: 'echo', payload: 'x', scheduled_at: new Date(Date.now() + 60_000).toISOString(), retry_delay_seconds: 0 });
    // A ghost claims it with a short lease, as a worker of a process that then died would have.
    await scheduler.store.updateWaitingTask(task_id, { scheduledAt: null }, Date.now());
    const claimed = await scheduler.store.claimTasks([task_id], 'ghost-worker', Date.now(), 100);
    expect(claimed).to.have.length(1);
    const t = await waitTerminal(task_id);
    expect(t.status).to.equal('SUCCEEDED');
    expect(t.attempts).to.equal(2);
    const history = t.attempt_history as Array<{ attempt: number; worker_id: string; error: { type: string } | null }>;
    expect(history[0]).to.include({ attempt: 1, worker_id: 'ghost-worker' });
    expect(history[0].error?.type).to.equal('worker_lost');
  });
});
