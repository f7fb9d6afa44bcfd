/**
 * Smoke test of the service with Redis coordination: the real process with REDIS_URL set (Redis
 * from `.ci/services.sh`), a task run to SUCCEEDED, a running task cancelled, /readyz and /metrics
 * showing Redis, and a graceful stop that closes the Redis connections (exit code 0). Skipped
 * without REDIS_URL.
 */
import { expect } from 'chai';
import { http, isTerminal, waitForTask } from '../helpers/http';
import { ServiceProcess, startServiceProcess } from '../helpers/service-process';
import { serviceConfigEnv } from '../helpers/service-config';
import { servicesOnPostgres } from '../helpers/service-store';
import { tempDir } from '../helpers/temp-dir';
import { NEEDS_REDIS, REDIS_URL } from '../helpers/redis';

describe('service with Redis coordination (real process, REDIS_URL set)', function () {
  this.timeout(60_000);
  if (!REDIS_URL) {
    it.skip(NEEDS_REDIS, () => undefined);
    return;
  }
  const dir = tempDir();
  let svc: ServiceProcess | null = null;

  before(async () => {
    const env = serviceConfigEnv(dir.path, { rateLimits: { echo: { ratePerSecond: 500, burst: 20 } } });
    svc = await startServiceProcess(dir.path, { ...env, REDIS_URL: REDIS_URL as string, WORKERS: '1' });
  });

  after(async () => {
    await svc?.stop();
    dir.remove();
  });

  it('is ready with Redis up and exposes the scheduler_redis_* metrics', async () => {
    const ready = await http('GET', `${svc!.url}/readyz`);
    expect(ready.status).to.equal(200);
    // On a shared store (TEST_SERVICE_STORE=postgres) the node is a cluster member: /readyz also
    // reports the partitions it owns (all of them, being alone).
    const partitions = servicesOnPostgres() ? { partitions: { owned: 8, total: 8, fencing: 0 } } : {};
    expect(ready.body).to.deep.equal({ status: 'ready', store: true, redis: 'up', ...partitions });
    const res = await fetch(`${svc!.url}/metrics`);
    const text = await res.text();
    expect(text).to.match(/^scheduler_redis_up 1$/m);
    expect(text).to.match(/^scheduler_redis_clock_samples_total\{result="ok"\} [1-9]/m);
  });

  it('runs rate-limited tasks (tokens leased from Redis) to SUCCEEDED', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) ids.push((await http('POST', `${svc!.url}/api/v1/tasks`, { task_type: 'echo', payload: i })).body.task_id);
    for (const id of ids) expect((await waitForTask(svc!.url, id, isTerminal)).status).to.equal('SUCCEEDED');
    const text = await (await fetch(`${svc!.url}/metrics`)).text();
    expect(text).to.match(/^scheduler_redis_token_leases_total\{limit="task_type",result="granted"\} [1-9]/m);
  });

  it('cancels a running task by a local abort; an embedded node publishes no cancel (it shares no tasks)', async () => {
    const { body } = await http('POST', `${svc!.url}/api/v1/tasks`, { task_type: 'sleep', payload: { ms: 30_000 } });
    await waitForTask(svc!.url, body.task_id, (t) => t.status === 'RUNNING');
    const cancel = await http('POST', `${svc!.url}/api/v1/tasks/${body.task_id}/cancel`);
    expect(cancel.status).to.equal(202);
    expect((await waitForTask(svc!.url, body.task_id, isTerminal)).status).to.equal('CANCELLED');
    // A cluster member on a shared store (TEST_SERVICE_STORE=postgres) publishes its cancels: the
    // part about the embedded node applies to SQLite only.
    if (servicesOnPostgres()) return;
    const text = await (await fetch(`${svc!.url}/metrics`)).text();
    expect(text).to.not.match(/^scheduler_redis_messages_total\{channel="cancel",direction="published"\}/m);
  });

  it('stops gracefully: exit code 0 with the Redis connections closed', async () => {
    await svc!.stop();
    expect(svc!.child.exitCode).to.equal(0);
  });
});
