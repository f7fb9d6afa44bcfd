/**
 * A graceful restart of the service does not end the attempts leased to HTTP pull workers
 * (operations-service.ts `recoverOrphans`, docs/EXTERNAL-QUEUES.md): the lease runs on, the
 * worker's completion within it is taken by the restarted service, and a task with no retries left
 * is not sent to the dead-letter queue by the restart (it was before: `worker_lost`, DEAD). The
 * real scheduler twice on one SQLite file, requests through `app.inject`.
 */
import { expect } from 'chai';
import path from 'node:path';
import pino from 'pino';
import { Scheduler, startScheduler } from '../../src/bootstrap';
import { loadConfig } from '../../src/config';
import { serviceStoreOverrides, servicesOnPostgres } from '../helpers/service-store';
import { tempDir } from '../helpers/temp-dir';

describe('HTTP pull workers: a lease held across a graceful restart', function () {
  this.timeout(60_000);
  const dir = tempDir();
  let scheduler: Scheduler | null = null;

  const start = async (): Promise<Scheduler> => {
    const config = loadConfig({
      configDir: path.resolve(__dirname, '..', '..', '..', 'config'),
      env: {},
      overrides: {
        sqlitePath: path.join(dir.path, 's.db'),
        ...serviceStoreOverrides(dir.path),
        logLevel: 'silent',
        workers: 1,
        partitions: 4,
        externalQueues: { jobs: { transport: 'http', leaseMs: 60_000 }, capped: { transport: 'http', leaseMs: 60_000, maxInFlight: 2 } },
      },
    });
    scheduler = await startScheduler(config, { logger: pino({ level: 'silent' }) });
    return scheduler;
  };
  const post = (s: Scheduler, url: string, body: unknown) =>
    s.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body) });

  afterEach(async () => {
    await scheduler?.close();
    scheduler = null;
  });
  after(() => dir.remove());

  it('the restarted service keeps the attempt RUNNING and takes its completion; nothing is retried', async () => {
    const first = await start();
    const sub = await post(first, '/api/v1/tasks', { task_type: 'resize', queue: 'jobs', payload: { n: 1 }, max_retries: 0 });
    expect(sub.statusCode, sub.body).to.equal(202);
    const id = sub.json().task_id as string;
    const leased = await post(first, '/api/v1/queues/jobs/lease', { worker_id: 'w1', wait_s: 10 });
    expect(leased.json().tasks.map((t: { task_id: string }) => t.task_id)).to.deep.equal([id]);
    await first.close();
    scheduler = null;

    const second = await start();
    const running = await second.service.get(id, { attempts: true });
    expect(running).to.deep.include({ status: 'RUNNING', attempts: 1, worker_id: 'http:w1' });
    const hb = await post(second, `/api/v1/tasks/${id}/heartbeat`, { attempt: 1 });
    expect(hb.statusCode, hb.body).to.equal(200);
    const done = await post(second, `/api/v1/tasks/${id}/complete`, { attempt: 1, result: { ok: true } });
    expect(done.statusCode, done.body).to.equal(200);
    const t = await second.service.get(id, { attempts: true });
    expect(t).to.deep.include({ status: 'SUCCEEDED', attempts: 1, result: { ok: true } });
    expect(t.attempt_history).to.have.length(1);
  });

  // Embedded store only: a cluster member (the PostgreSQL store) counts only what it handed out itself.
  const embeddedOnly = servicesOnPostgres() ? it.skip : it;
  embeddedOnly("attempts leased before the restart count against the queue's maxInFlight after it, until they end", async () => {
    const first = await start();
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const sub = await post(first, '/api/v1/tasks', { task_type: 'resize', queue: 'capped', payload: { n: i } });
      expect(sub.statusCode, sub.body).to.equal(202);
      ids.push(sub.json().task_id as string);
    }
    const leased = await post(first, '/api/v1/queues/capped/lease', { worker_id: 'w1', max: 2, wait_s: 10 });
    const out = leased.json().tasks as Array<{ task_id: string; attempt: number }>;
    expect(out).to.have.length(2);
    await first.close();
    scheduler = null;

    const second = await start();
    // Two still out of a cap of two: nothing more until one ends (before, two more were handed out).
    const none = await post(second, '/api/v1/queues/capped/lease', { worker_id: 'w2', max: 2, wait_s: 0 });
    expect(none.json().tasks).to.deep.equal([]);
    const done = await post(second, `/api/v1/tasks/${out[0].task_id}/complete`, { attempt: out[0].attempt, result: null });
    expect(done.statusCode, done.body).to.equal(200);
    const one = await post(second, '/api/v1/queues/capped/lease', { worker_id: 'w2', max: 2, wait_s: 10 });
    expect(one.json().tasks).to.have.length(1);
  });
});
