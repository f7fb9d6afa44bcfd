import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { terminal, useInProcessScheduler } from '../helpers/in-process-scheduler';
import { servicesOnPostgres } from '../helpers/service-store';

/**
 * Fairness and rate limits on the real scheduler (actors, forked workers, system clock). The
 * bounds are loose on purpose: speed is measured by load-tests/bench-fairness, this checks order.
 */
describe('tenants on the real scheduler: no queueing behind another tenant, exact rate limits', function () {
  this.timeout(120_000);
  const s = useInProcessScheduler(
    { workers: 2, workerConcurrency: 16, partitions: 8, rateLimits: { send_sms: { ratePerSecond: 10 } } },
    (dir) => {
      const sms = path.join(dir, 'send-sms.js');
      fs.writeFileSync(sms, 'module.exports = async () => ({ sent: true });\n');
      return { handlers: { send_sms: sms } };
    },
  );

  it("tenant B's tasks are not queued behind tenant A's 20,000-task backlog", async () => {
    const { service, store } = s.scheduler;
    for (let b = 0; b < 20; b++) {
      await service.submitBatch({ tasks: Array.from({ length: 1000 }, () => ({ task_type: 'noop', metadata: { tenant_id: 'flood' } })) });
    }
    const bIds: string[] = [];
    for (let i = 0; i < 10; i++) bIds.push((await service.submit({ task_type: 'noop', metadata: { tenant_id: 'steady' } })).task_id);
    const bTasks = [];
    for (const id of bIds) bTasks.push(await s.waitFor(id, terminal, 60_000));
    const counts = await store.countByState();
    const floodLeft = counts.PENDING + counts.RUNNING + counts.SCHEDULED;
    // When B's last task is done, most of A's backlog is still waiting: B did not wait for it.
    expect(floodLeft, 'tasks of A still waiting when B was done').to.be.greaterThan(5000);
    for (const t of bTasks) expect(t.status).to.equal('SUCCEEDED');
    const lags = bTasks.map((t) => Date.parse(t.started_at) - Date.parse(t.created_at));
    expect(Math.max(...lags), `B's dispatch lags ${lags.join(', ')} ms`).to.be.below(2000);
    // Let A's backlog drain before the next test (waiting for the store's state, not for time).
    for (;;) {
      const c = await store.countByState();
      if (c.PENDING + c.RUNNING + c.SCHEDULED + c.RETRYING === 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
  });

  it('C3: a limit of 10/s on send_sms: start #11 is a second after #1, no 1 s window holds more than 10; noop is not slowed', async () => {
    const { service } = s.scheduler;
    const ids = (await service.submitBatch({ tasks: Array.from({ length: 31 }, () => ({ task_type: 'send_sms' })) })).tasks.map(
      (t) => t.task_id,
    );
    const noop = (await service.submitBatch({ tasks: Array.from({ length: 5 }, () => ({ task_type: 'noop' })) })).tasks.map(
      (t) => t.task_id,
    );
    const sms = [];
    for (const id of ids) sms.push(await s.waitFor(id, terminal, 30_000));
    const starts = sms.map((t) => Date.parse(t.started_at)).sort((a, b) => a - b);
    // started_at is the instant the token was taken (the pump's), so every window of 11 starts spans
    // at least 1 s. On PostgreSQL the attempt starts when its claim's write runs (the later of the
    // two instants), a few ms after the token: there, allow that jitter.
    const span = servicesOnPostgres() ? 980 : 1000;
    expect(starts[10] - starts[0]).to.be.at.least(span);
    for (let i = 0; i + 10 < starts.length; i++) expect(starts[i + 10] - starts[i], `starts ${i} to ${i + 10}`).to.be.at.least(span);
    for (const id of noop) {
      const t = await s.waitFor(id, terminal, 10_000);
      expect(Date.parse(t.started_at)).to.be.below(starts[3]);
    }
    expect(sms.every((t) => t.attempts === 1)).to.equal(true); // waiting spent no retries
  });

  it('tasks cancelled before their time use up no send_sms tokens: the one left starts on time', async () => {
    const { service } = s.scheduler;
    const at = new Date(Date.now() + 1500).toISOString();
    const cancelled = (
      await service.submitBatch({
        tasks: Array.from({ length: 25 }, () => ({ task_type: 'send_sms', priority: 'high', scheduled_at: at })),
      })
    ).tasks.map((t) => t.task_id);
    const { task_id: real } = await service.submit({ task_type: 'send_sms', priority: 'low', scheduled_at: at });
    for (const id of cancelled) await service.cancel(id);
    const t = await s.waitFor(real, terminal, 30_000);
    expect(t.status).to.equal('SUCCEEDED');
    // 25 tokens at 10/s would hold it back 1.5 s or more; handed out and refused, they come back.
    expect(Date.parse(t.started_at) - Date.parse(t.scheduled_at)).to.be.below(1000);
  });
});
