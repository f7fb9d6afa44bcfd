import { expect } from 'chai';
import { isTerminal, waitForTask } from '../helpers/http';
import { ServiceProcess, startServiceProcess } from '../helpers/service-process';
import { tempDir } from '../helpers/temp-dir';

async function post(url: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

/**
 * A cancel that the store answers in the same group commit as the claim of its task's attempt
 * reached the dispatcher before the attempt's `run` message had gone to its worker; the abort was
 * sent at once, overtook the run, and the worker (not knowing the attempt yet) dropped it. The
 * handler then ran on, and after `timeoutGraceMs` the dispatcher killed its worker process, with
 * every other attempt running in it (they ran again, `worker_recycled`). Found by re-running the
 * behaviour cases (cancel racing the start); 10 of 30 such cancels were lost in a trial of the
 * old code, and 4 of 6 bystanders ran twice.
 */
describe('cancels racing the start of their attempts (real process): every handler stopped, no worker process killed', function () {
  this.timeout(90_000);
  const dir = tempDir();
  let svc: ServiceProcess;
  before(async () => {
    svc = await startServiceProcess(dir.path, { WORKERS: '2' });
  });
  after(async () => {
    await svc?.stop();
    dir.remove();
  });

  it('30 tasks cancelled within ±20 ms of their due instant end CANCELLED; the tasks beside them in the same processes run once', async () => {
    const bystanders: string[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await post(`${svc.url}/api/v1/tasks`, { task_type: 'sleep', payload: { ms: 6000 }, max_retries: 3 });
      expect(r.status, JSON.stringify(r.body)).to.equal(202);
      bystanders.push(r.body.task_id);
    }
    const dueAt = Date.now() + 1500;
    const batch = await post(`${svc.url}/api/v1/tasks/batch`, {
      tasks: Array.from({ length: 30 }, () => ({ task_type: 'sleep', payload: { ms: 8000 }, scheduled_at: new Date(dueAt).toISOString() })),
    });
    expect(batch.status, JSON.stringify(batch.body)).to.equal(202);
    const ids: string[] = batch.body.tasks.map((t: { task_id: string }) => t.task_id);
    // The race itself: each cancel sent at its own moment from 20 ms before the instant to 20 ms after it.
    const answers = await Promise.all(
      ids.map(
        (id, i) =>
          new Promise<number>((resolve, reject) =>
            setTimeout(
              () => post(`${svc.url}/api/v1/tasks/${id}/cancel`).then((r) => resolve(r.status), reject),
              Math.max(0, dueAt - Date.now() - 20 + (i * 40) / ids.length),
            ),
          ),
      ),
    );
    for (const status of answers) expect([200, 202]).to.include(status);
    for (const id of ids) {
      const t = await waitForTask(svc.url, id, isTerminal, 30_000);
      expect(t.status, id).to.equal('CANCELLED');
    }
    for (const id of bystanders) {
      const t = await waitForTask(svc.url, id, isTerminal, 30_000, '?include=attempts');
      expect(t.status, id).to.equal('SUCCEEDED');
      expect(
        t.attempts,
        `ran again: ${JSON.stringify(t.attempt_history?.map((a: { error?: unknown }) => a.error))}\n${svc.output()}`,
      ).to.equal(1);
    }
    expect(svc.output()).not.to.include('killing worker process');
  });
});
