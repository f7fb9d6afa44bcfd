import { expect } from 'chai';
import { http, isTerminal, waitForTask } from '../helpers/http';
import { serviceConfigEnv } from '../helpers/service-config';
import { startServiceProcess } from '../helpers/service-process';
import { servicesOnPostgres } from '../helpers/service-store';
import { tempDir } from '../helpers/temp-dir';

describe('durability: SIGKILL of the whole service loses no acknowledged task', function () {
  this.timeout(90_000);
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(() => dir.remove());

  it('a task scheduled 3 s ahead still runs, once, after SIGKILL and restart', async () => {
    const first = await startServiceProcess(dir.path);
    const scheduledAt = new Date(Date.now() + 3000).toISOString();
    const { body } = await http('POST', `${first.url}/api/v1/tasks`, { task_type: 'echo', payload: 'survivor', scheduled_at: scheduledAt });
    await first.kill9();
    const second = await startServiceProcess(dir.path);
    try {
      const t = await waitForTask(second.url, body.task_id, isTerminal, 20_000, '?include=attempts');
      expect(t.status).to.equal('SUCCEEDED');
      expect(t.result).to.equal('survivor');
      expect(t.attempts).to.equal(1);
      expect(t.attempt_history).to.have.length(1);
      expect(Date.parse(t.started_at)).to.be.at.least(Date.parse(scheduledAt));
    } finally {
      await second.stop();
    }
  });

  it('a task RUNNING when the service was killed runs again as a new attempt', async () => {
    // On a shared store (TEST_SERVICE_STORE=postgres) the restarted process is a new cluster member:
    // it recovers no RUNNING attempt at start (it may be a live member's, docs/CLUSTER.md), the
    // attempt-lease sweeper ends the lost one when its lease (`leaseMs`) runs out: 2 s here, not 30.
    const env = servicesOnPostgres() ? serviceConfigEnv(dir.path, { leaseMs: 2000 }) : {};
    const first = await startServiceProcess(dir.path, env);
    const { body } = await http('POST', `${first.url}/api/v1/tasks`, { task_type: 'sleep', payload: { ms: 800 }, retry_delay_seconds: 0 });
    await waitForTask(first.url, body.task_id, (t) => t.status === 'RUNNING');
    await first.kill9();
    const second = await startServiceProcess(dir.path, env);
    try {
      const t = await waitForTask(second.url, body.task_id, isTerminal, 20_000, '?include=attempts');
      expect(t.status).to.equal('SUCCEEDED');
      expect(t.attempts).to.equal(2);
      expect(t.attempt_history[0].error).to.include({ type: 'worker_lost' });
    } finally {
      await second.stop();
    }
  });

  it('2,000 acknowledged tasks, SIGKILL mid-flight: after restart every one completes exactly once', async () => {
    // On PostgreSQL the attempts the kill cut off end when their lease runs out (as above): 2 s here.
    // With the default 30 s, the first task waited on could still be RETRYING at its 30 s bound.
    const env = servicesOnPostgres() ? serviceConfigEnv(dir.path, { leaseMs: 2000 }) : {};
    const first = await startServiceProcess(dir.path, env);
    const ids: string[] = [];
    for (let b = 0; b < 4; b++) {
      const tasks = Array.from({ length: 500 }, (_, i) => ({ task_type: 'echo', payload: b * 500 + i }));
      const res = await http('POST', `${first.url}/api/v1/tasks/batch`, { tasks });
      expect(res.status).to.equal(202);
      ids.push(...res.body.tasks.map((t: any) => t.task_id));
    }
    await first.kill9();
    const second = await startServiceProcess(dir.path, env);
    try {
      for (const id of ids) {
        const t = await waitForTask(second.url, id, isTerminal, 30_000, '?include=attempts');
        expect(t.status).to.equal('SUCCEEDED');
        // at most one attempt succeeded; any earlier attempt was recorded as lost, never completed
        expect(t.attempt_history.filter((a: any) => a.outcome === 'SUCCEEDED')).to.have.length(1);
      }
    } finally {
      await second.stop();
    }
  });
});
