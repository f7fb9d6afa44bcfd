import { expect } from 'chai';
import path from 'node:path';
import { http } from '../helpers/http';
import { countLines } from '../helpers/process-files';
import { makePullWorkerProject, startPullWorker, WorkerProcess } from '../helpers/pull-worker-project';
import { serviceConfigEnv } from '../helpers/service-config';
import { ServiceProcess, startServiceProcess } from '../helpers/service-process';
import { tempDir } from '../helpers/temp-dir';
import fs from 'node:fs';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

/** Polls `check` until it holds (bounded): waits for a state of the system, not for a duration. */
async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 45_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * A separate application with its own package.json (in a temp dir, depending on this package by
 * path) runs `createWorker` from `actor-task-scheduler/worker` in its own processes against the real
 * service (`node dist/src/main.js`, embedded store) whose config names the pull queue `jobs`.
 */
describe('HTTP pull workers of a separate application (real processes)', function () {
  this.timeout(120_000);
  const data = tempDir('pull-svc-');
  const app = tempDir('pull-app-');
  let svc: ServiceProcess | null = null;
  let workers: WorkerProcess[] = [];
  const LEASE_MS = 2000;

  before(async function () {
    this.timeout(180_000);
    const env = serviceConfigEnv(data.path, { externalQueues: { jobs: { transport: 'http', leaseMs: LEASE_MS, maxInFlight: 1000 } } });
    svc = await startServiceProcess(data.path, env, 60_000);
    await makePullWorkerProject(app.path);
  });
  afterEach(async () => {
    await Promise.all(workers.map((w) => w.kill9()));
    workers = [];
  });
  after(async () => {
    await svc?.stop();
    data.remove();
    app.remove();
  });

  function startWorker(env: Record<string, string> = {}): WorkerProcess {
    const w = startPullWorker(app.path, { SCHEDULER_URL: svc!.url, QUEUE: 'jobs', ...env });
    workers.push(w);
    return w;
  }

  async function submit(n: number, from = 0): Promise<string[]> {
    const tasks = Array.from({ length: n }, (_, i) => ({
      task_type: 'square',
      queue: 'jobs',
      payload: { n: from + i },
      max_retries: 5,
      retry_backoff: 'fixed',
      retry_delay_seconds: 0.1,
    }));
    const res = await http('POST', `${svc!.url}/api/v1/tasks/batch`, { tasks });
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    return res.body.tasks.map((t: { task_id: string }) => t.task_id);
  }

  /** Every task of queue `jobs` in `status`, read page by page. */
  async function tasksIn(status: string): Promise<Array<{ task_id: string }>> {
    const out: Array<{ task_id: string }> = [];
    let cursor: string | null = null;
    do {
      const q: string = `status=${status}&queue=jobs&limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const res = await http('GET', `${svc!.url}/api/v1/tasks?${q}`);
      out.push(...res.body.tasks);
      cursor = res.body.next_cursor;
    } while (cursor);
    return out;
  }

  async function allSucceeded(ids: string[]): Promise<boolean> {
    const done = new Set((await tasksIn('SUCCEEDED')).map((t) => t.task_id));
    return ids.every((id) => done.has(id));
  }

  it('1,000 tasks of its queue all SUCCEEDED, with their results, through two worker processes', async () => {
    const ids = await submit(1000);
    const a = startWorker({ CONCURRENCY: '16' });
    const b = startWorker({ CONCURRENCY: '16' });
    await Promise.all([a.ready, b.ready]);
    await until('1,000 tasks SUCCEEDED', () => allSucceeded(ids), 90_000);
    const sample = await http('GET', `${svc!.url}/api/v1/tasks/${ids[7]}`);
    expect(sample.body.result).to.include({ square: 49 });
    expect(sample.body.attempts).to.equal(1);
    expect(sample.body.worker_id).to.match(/^http:/);
    const logs = await http('GET', `${svc!.url}/api/v1/tasks/${ids[7]}/attempts/1/logs`);
    expect(JSON.stringify(logs.body)).to.include('squared');
    expect(await a.stop()).to.equal(0);
    expect(await b.stop()).to.equal(0);
  });

  it('its own client script submits with the typed client, waits for every result and reads one; a bad field is a typed error', async () => {
    const w = startWorker({ CONCURRENCY: '8' });
    await w.ready;
    const { stdout } = await promisify(execFile)(process.execPath, ['client.mjs'], {
      cwd: app.path,
      env: { ...process.env, SCHEDULER_URL: svc!.url, QUEUE: 'jobs', COUNT: '20' },
      timeout: 90_000,
    });
    const seen = JSON.parse(stdout.trim());
    expect(seen.statuses).to.deep.equal(Array(20).fill('SUCCEEDED'));
    expect(seen.squares).to.deep.equal(Array.from({ length: 20 }, (_, i) => i * i));
    expect(seen.read).to.deep.include({ status: 'SUCCEEDED', attempts: 1 });
    expect(seen.refused).to.deep.equal({ status: 400, code: 'VALIDATION_FAILED', field: 'priority' });
    expect(await w.stop()).to.equal(0);
  });

  it('a worker SIGKILLed mid-batch leaves no task stuck: its leases expire and the tasks run again; its late report is refused (409)', async () => {
    const started = path.join(app.path, 'started.log');
    const ids = await submit(40, 5000);
    const doomed = startWorker({ CONCURRENCY: '10', HANG: '1', STARTED_FILE: started });
    await doomed.ready;
    await until('10 attempts held by the doomed worker', () => countLines(started) >= 10);
    await doomed.kill9();
    const held = fs
      .readFileSync(started, 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.split(' ')[0]);

    const rescuer = startWorker({ CONCURRENCY: '8' });
    await rescuer.ready;
    await until('all 40 tasks SUCCEEDED', () => allSucceeded(ids), 60_000);
    for (const id of held) {
      const t = await http('GET', `${svc!.url}/api/v1/tasks/${id}`);
      expect(t.body.status).to.equal('SUCCEEDED');
      expect(t.body.attempts, id).to.be.at.least(2);
    }
    expect(await tasksIn('RUNNING')).to.have.length(0);

    // The killed worker's attempt 1 is stale: any report of it is refused and changes nothing.
    const stale = await http('POST', `${svc!.url}/api/v1/tasks/${held[0]}/complete`, { attempt: 1, result: 'late' });
    expect(stale.status).to.equal(409);
    expect(stale.body.error.code).to.equal('ATTEMPT_CONFLICT');
    const beat = await http('POST', `${svc!.url}/api/v1/tasks/${held[0]}/heartbeat`, { attempt: 1 });
    expect(beat.status).to.equal(409);
    const after = await http('GET', `${svc!.url}/api/v1/tasks/${held[0]}`);
    expect(after.body.result).to.not.equal('late');
    await rescuer.stop();
  });
});
