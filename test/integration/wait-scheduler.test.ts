import path from 'node:path';
import { expect } from 'chai';
import pino from 'pino';
import { startScheduler, Scheduler } from '../../src/bootstrap';
import { loadConfig } from '../../src/config';
import { serviceStoreOverrides } from '../helpers/service-store';
import { tempDir } from '../helpers/temp-dir';
import { useInProcessScheduler } from '../helpers/in-process-scheduler';

/**
 * `?wait=` on the real scheduler (embedded store, forked workers): the dispatcher's completion
 * path wakes the waiter. The re-check is set to a minute, so an answer before the timeout can only
 * come from this node's end events.
 */
describe('?wait= on a running scheduler', function () {
  this.timeout(60_000);
  const s = useInProcessScheduler({ workers: 1, workerConcurrency: 8, partitions: 4, waits: { maxWaiters: 100, recheckMs: 60_000 } });
  const inject = (method: 'GET' | 'POST', url: string, payload?: object) =>
    s.scheduler.app.inject({ method, url, ...(payload ? { payload } : {}) });

  it('answers when an echo task ends, with its result, long before the timeout', async () => {
    const { task_id } = (await inject('POST', '/api/v1/tasks', { task_type: 'echo', payload: { n: 1 } })).json();
    const started = Date.now();
    const res = await inject('GET', `/api/v1/tasks/${task_id}?wait=30`);
    expect(res.statusCode).to.equal(200);
    expect(res.json()).to.include({ task_id, status: 'SUCCEEDED' });
    expect(res.json().result).to.deep.equal({ n: 1 });
    expect(Date.now() - started, 'answered on the end, not at the timeout').to.be.below(20_000);
  });

  it('answers many waits on a batch as each task ends', async () => {
    const tasks = Array.from({ length: 50 }, (_, i) => ({ task_type: 'sleep', payload: { ms: 50 + (i % 5) * 20 } }));
    const acks = (await inject('POST', '/api/v1/tasks/batch', { tasks })).json().tasks as Array<{ task_id: string }>;
    const answers = await Promise.all(acks.map((a) => inject('GET', `/api/v1/tasks/${a.task_id}?wait=30`)));
    expect(answers.map((r) => r.json().status)).to.deep.equal(acks.map(() => 'SUCCEEDED'));
  });

  it('answers when a running task is cancelled (its handler aborted)', async () => {
    const { task_id } = (await inject('POST', '/api/v1/tasks', { task_type: 'sleep', payload: { ms: 600_000 } })).json();
    const waited = inject('GET', `/api/v1/tasks/${task_id}?wait=30`);
    await s.waitFor(task_id, (t) => t.status === 'RUNNING');
    expect((await inject('POST', `/api/v1/tasks/${task_id}/cancel`)).statusCode).to.equal(202);
    const res = await waited;
    expect(res.json()).to.include({ task_id, status: 'CANCELLED' });
  });

  it('answers a workflow wait when its last task ends', async () => {
    const wf = (
      await inject('POST', '/api/v1/workflows', {
        tasks: [
          { task_id: 'a', task_type: 'echo', payload: 1 },
          { task_id: 'b', task_type: 'echo', payload: 2, dependencies: ['a'] },
        ],
      })
    ).json();
    const res = await inject('GET', `/api/v1/workflows/${wf.workflow_id}?wait=30`);
    expect(res.json()).to.include({ status: 'SUCCEEDED', open_tasks: 0 });
  });
});

describe('?wait= at shutdown', function () {
  this.timeout(60_000);
  const dir = tempDir();
  let scheduler: Scheduler | null = null;
  after(async () => {
    await scheduler?.close();
    dir.remove();
  });

  it('close() answers a pending 60 s wait with the current state instead of waiting for it', async () => {
    const config = loadConfig({
      configDir: path.resolve(__dirname, '..', '..', '..', 'config'),
      env: {},
      overrides: {
        sqlitePath: path.join(dir.path, 's.db'),
        ...serviceStoreOverrides(dir.path),
        logLevel: 'silent',
        workers: 1,
        partitions: 4,
        shutdownGraceMs: 0,
      },
    });
    scheduler = await startScheduler(config, { logger: pino({ level: 'silent' }) });
    const later = new Date(Date.now() + 3_600_000).toISOString();
    const { task_id } = (
      await scheduler.app.inject({ method: 'POST', url: '/api/v1/tasks', payload: { task_type: 'echo', scheduled_at: later } })
    ).json();
    const waited = scheduler.app.inject({ method: 'GET', url: `/api/v1/tasks/${task_id}?wait=60` });
    for (let i = 0; i < 2000 && scheduler.waiters.size === 0; i++) await new Promise((r) => setImmediate(r));
    expect(scheduler.waiters.size, 'the wait is held').to.equal(1);
    const started = Date.now();
    await scheduler.close();
    const res = await waited;
    expect(res.statusCode).to.equal(200);
    expect(res.json()).to.include({ task_id, status: 'SCHEDULED' });
    expect(Date.now() - started, 'not held for the 60 s').to.be.below(30_000);
  });
});
