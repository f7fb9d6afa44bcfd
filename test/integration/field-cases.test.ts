import { expect } from 'chai';
import { http, isTerminal, waitForTask } from '../helpers/http';
import { ServiceProcess, useServiceProcess } from '../helpers/service-process';

/** Cases from ../shared/cases/behaviour.md that the embedded foundation must already honour. */
describe('field cases (shared/cases/behaviour.md) on one worker slot', function () {
  this.timeout(60_000);
  const fixture = useServiceProcess({ WORKERS: '1', WORKER_CONCURRENCY: '1' });
  const submit = (body: unknown) => fixture.submit(body);
  let svc: ServiceProcess;
  before(() => {
    svc = fixture.svc;
  });

  it('C4a: low then high with the same scheduled_at → high runs first when the slot frees', async () => {
    const blocker = await submit({ task_type: 'sleep', payload: { ms: 1500 } });
    await waitForTask(svc.url, blocker, (t) => t.status === 'RUNNING');
    const at = new Date(Date.now() + 300).toISOString();
    const low = await submit({ task_type: 'noop', priority: 'low', scheduled_at: at });
    const high = await submit({ task_type: 'noop', priority: 'high', scheduled_at: at });
    const [l, h] = [await waitForTask(svc.url, low, isTerminal), await waitForTask(svc.url, high, isTerminal)];
    expect(Date.parse(h.started_at)).to.be.at.most(Date.parse(l.started_at));
    expect(h.completed_at <= l.started_at, 'high finished before low started').to.equal(true);
  });

  it('C4: a waiting task PATCHed to high priority runs before the low ones queued ahead of it', async () => {
    const blocker = await submit({ task_type: 'sleep', payload: { ms: 3000 } });
    await waitForTask(svc.url, blocker, (t) => t.status === 'RUNNING');
    const lows: string[] = [];
    for (let i = 0; i < 3; i++) lows.push(await submit({ task_type: 'sleep', priority: 'low', payload: { ms: 50 } }));
    const p = await submit({ task_type: 'sleep', priority: 'low', payload: { ms: 50 } });
    const patched = await http('PATCH', `${svc.url}/api/v1/tasks/${p}`, { priority: 'high' });
    expect(patched.status).to.equal(200);
    expect((await waitForTask(svc.url, blocker, () => true)).status, 'the slot was still busy at the PATCH').to.equal('RUNNING');
    const t = await waitForTask(svc.url, p, isTerminal);
    expect(t).to.include({ status: 'SUCCEEDED', priority: 'high' });
    for (const id of lows) {
      const l = await waitForTask(svc.url, id, isTerminal);
      expect(Date.parse(l.started_at), 'a low task started before the task raised to high').to.be.at.least(Date.parse(t.started_at));
    }
  });

  it('C4b: a high task that fails once retries before the waiting low ones', async () => {
    const blocker = await submit({ task_type: 'sleep', payload: { ms: 800 } });
    await waitForTask(svc.url, blocker, (t) => t.status === 'RUNNING');
    const high = await submit({
      task_type: 'fail',
      priority: 'high',
      payload: { times: 1 },
      retry_delay_seconds: 0,
      retry_backoff: 'fixed',
    });
    const lows: string[] = [];
    for (let i = 0; i < 5; i++) lows.push(await submit({ task_type: 'sleep', priority: 'low', payload: { ms: 50 } }));
    const h = await waitForTask(svc.url, high, isTerminal);
    expect(h.status).to.equal('SUCCEEDED');
    expect(h.attempts).to.equal(2);
    for (const id of lows) {
      const l = await waitForTask(svc.url, id, isTerminal);
      expect(Date.parse(l.started_at), 'a low task started before the high retry').to.be.at.least(Date.parse(h.started_at));
    }
  });

  it('C1: a worker SIGKILLed mid-attempt, then timeouts: never RUNNING for ever; DEAD after 3 attempts, in the dead-letter queue', async () => {
    const id = await submit({
      task_type: 'sleep',
      payload: { ms: 300_000 },
      timeout_seconds: 5,
      max_retries: 2,
      retry_backoff: 'fixed',
      retry_delay_seconds: 1,
    });
    const running = await waitForTask(svc.url, id, (t) => t.status === 'RUNNING');
    expect(running.attempts).to.equal(1);
    for (const pid of svc.workerPids()) process.kill(pid, 'SIGKILL');
    const t = await waitForTask(svc.url, id, isTerminal, 45_000, '?include=attempts');
    expect(t).to.include({ status: 'DEAD', attempts: 3 });
    const history = t.attempt_history as Array<{ attempt: number; outcome: string; error: { type: string } }>;
    expect(history.map((a) => [a.attempt, a.error.type])).to.deep.equal([
      [1, 'worker_lost'],
      [2, 'timeout'],
      [3, 'timeout'],
    ]);
    const dead = (await http('GET', `${svc.url}/api/v1/dead-letter?task_type=sleep`)).body;
    expect(dead.tasks.map((d: { task_id: string }) => d.task_id)).to.include(id);
  });

  it("C1: a cron whose instance's worker was SIGKILLed still fires at its next instant (overlap skip), and that instance runs", async () => {
    const created = await http('POST', `${svc.url}/api/v1/cron-tasks`, {
      name: 'interrupted',
      cron_expression: '*/2 * * * * *', // every 2 s
      task_type: 'sleep',
      payload: { ms: 300_000 },
      timeout_seconds: 30,
      max_retries: 0,
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const cronId = created.body.cron_id as string;
    /** Every instance fired, for the clean-up (a sleep of 300 s each). */
    const fired = new Set<string>();
    const runs = async () => {
      const list = (await http('GET', `${svc.url}/api/v1/cron-tasks/${cronId}/runs?limit=100`)).body.runs as Array<{
        fire_time: string;
        outcome: string;
        task_id: string | null;
      }>;
      for (const r of list) if (r.task_id) fired.add(r.task_id);
      return list;
    };
    try {
      let first: string | null = null;
      for (const deadline = Date.now() + 20_000; !first && Date.now() < deadline;) {
        const ids = (await runs()).filter((r) => r.task_id !== null).map((r) => r.task_id as string);
        for (const id of ids) if ((await http('GET', `${svc.url}/api/v1/tasks/${id}`)).body.status === 'RUNNING') first = id;
        if (!first) await new Promise((r) => setTimeout(r, 100));
      }
      expect(first, 'an instance RUNNING').to.be.a('string');
      for (const pid of svc.workerPids()) process.kill(pid, 'SIGKILL');
      const lost = await waitForTask(svc.url, first as string, isTerminal, 30_000, '?include=attempts');
      expect(lost).to.include({ status: 'DEAD' });
      expect(lost.attempt_history.map((a: { error: { type: string } }) => a.error.type)).to.deep.equal(['worker_lost']);
      const endedAt = Date.parse(lost.completed_at);
      // The next instant after the interrupted instance ended fires a new instance, which starts.
      let next: string | null = null;
      for (const deadline = Date.now() + 20_000; !next && Date.now() < deadline;) {
        const later = (await runs()).filter((r) => r.task_id !== null && r.task_id !== first && Date.parse(r.fire_time) >= endedAt - 2000);
        for (const r of later) {
          const t = (await http('GET', `${svc.url}/api/v1/tasks/${r.task_id}`)).body;
          if (t.status === 'RUNNING' && Date.parse(r.fire_time) > Date.parse(lost.created_at)) {
            next = r.task_id;
            // Its instant is the first one after the interrupted instance ended (every 2 s).
            expect(Date.parse(r.fire_time) - endedAt, r.fire_time).to.be.at.most(2000);
          }
        }
        if (!next) await new Promise((r) => setTimeout(r, 100));
      }
      expect(next, 'a later instance RUNNING').to.be.a('string');
    } finally {
      await http('DELETE', `${svc.url}/api/v1/cron-tasks/${cronId}`);
      for (const r of fired) await http('POST', `${svc.url}/api/v1/tasks/${r}/cancel`);
    }
  });

  it('C2b: a cancel is kept in the store, not in a worker: workers restarted between cancel and due time', async () => {
    const id = await submit({ task_type: 'echo', payload: 'never', scheduled_at: new Date(Date.now() + 1500).toISOString() });
    expect((await http('POST', `${svc.url}/api/v1/tasks/${id}/cancel`)).status).to.equal(200);
    for (const pid of svc.workerPids()) process.kill(pid, 'SIGKILL');
    const later = await submit({ task_type: 'noop', scheduled_at: new Date(Date.now() + 1700).toISOString() });
    await waitForTask(svc.url, later, isTerminal, 20_000);
    const t = (await http('GET', `${svc.url}/api/v1/tasks/${id}`)).body;
    expect(t).to.include({ status: 'CANCELLED', attempts: 0, started_at: null });
  });

  it('C2d/e: cancel of a SUCCEEDED task → 409 with the state; a second cancel → 409', async () => {
    const id = await submit({ task_type: 'noop' });
    await waitForTask(svc.url, id, isTerminal);
    const res = await http('POST', `${svc.url}/api/v1/tasks/${id}/cancel`);
    expect(res.status).to.equal(409);
    expect(res.body.error.details.state).to.equal('SUCCEEDED');
    const waiting = await submit({ task_type: 'noop', scheduled_at: new Date(Date.now() + 60_000).toISOString() });
    expect((await http('POST', `${svc.url}/api/v1/tasks/${waiting}/cancel`)).status).to.equal(200);
    const again = await http('POST', `${svc.url}/api/v1/tasks/${waiting}/cancel`);
    expect(again.status).to.equal(409);
    expect(again.body.error.details.state).to.equal('CANCELLED');
  });

  it('PATCH moves a scheduled task: 30 s → 1 s runs it then; 1 s → 30 s keeps it waiting', async () => {
    const early = await submit({ task_type: 'noop', scheduled_at: new Date(Date.now() + 30_000).toISOString() });
    const late = await submit({ task_type: 'noop', scheduled_at: new Date(Date.now() + 1000).toISOString() });
    const soon = new Date(Date.now() + 1000).toISOString();
    expect((await http('PATCH', `${svc.url}/api/v1/tasks/${early}`, { scheduled_at: soon })).status).to.equal(200);
    expect(
      (await http('PATCH', `${svc.url}/api/v1/tasks/${late}`, { scheduled_at: new Date(Date.now() + 30_000).toISOString() })).status,
    ).to.equal(200);
    const e = await waitForTask(svc.url, early, isTerminal, 10_000);
    expect(Date.parse(e.started_at)).to.be.at.least(Date.parse(soon));
    expect((await http('GET', `${svc.url}/api/v1/tasks/${late}`)).body.status).to.equal('SCHEDULED');
    expect((await http('POST', `${svc.url}/api/v1/tasks/${late}/cancel`)).status).to.equal(200);
  });
});
