import { expect } from 'chai';
import net from 'node:net';
import { http, isTerminal, waitForTask } from '../helpers/http';
import { ServiceProcess, useServiceProcess } from '../helpers/service-process';

describe('service end to end (real process, SQLite, forked workers)', function () {
  this.timeout(60_000);
  const fixture = useServiceProcess({ WORKERS: '2', WORKER_CONCURRENCY: '8' });
  const submit = (body: unknown) => fixture.submit(body);
  let svc: ServiceProcess;
  before(() => {
    svc = fixture.svc;
  });

  it('an echo task reaches SUCCEEDED with its payload as result and every run field filled', async () => {
    const payload = { order: 42, items: ['a', 'b'], note: 'naïve ✓' };
    const id = await submit({ task_type: 'echo', payload });
    const t = await waitForTask(svc.url, id, isTerminal);
    expect(t.status).to.equal('SUCCEEDED');
    expect(t.result).to.deep.equal(payload);
    expect(t.attempts).to.equal(1);
    expect(t.worker_id).to.match(/^worker-\d+$/);
    expect(t.duration_ms).to.be.a('number').and.at.least(0);
    expect(Date.parse(t.started_at)).to.be.at.least(Date.parse(t.created_at));
    expect(Date.parse(t.completed_at)).to.be.at.least(Date.parse(t.started_at));
  });

  it('a task scheduled 2 s ahead does not start before scheduled_at, and starts soon after it', async () => {
    const scheduledAt = new Date(Date.now() + 2000).toISOString();
    const id = await submit({ task_type: 'noop', scheduled_at: scheduledAt });
    expect((await http('GET', `${svc.url}/api/v1/tasks/${id}`)).body.status).to.equal('SCHEDULED');
    const t = await waitForTask(svc.url, id, isTerminal);
    const lateness = Date.parse(t.started_at) - Date.parse(scheduledAt);
    expect(lateness, 'started before scheduled_at').to.be.at.least(0);
    // Tolerant bound for a shared CI machine; load-tests/bench-throughput reports the distribution.
    expect(lateness, 'started late').to.be.below(1000);
  });

  it('a fail task with max_retries 2 ends DEAD after 3 attempts, with backoff between them', async () => {
    const id = await submit({
      task_type: 'fail',
      payload: { message: 'boom' },
      max_retries: 2,
      retry_backoff: 'exponential',
      retry_delay_seconds: 0.2,
      retry_jitter: false,
    });
    const t = await waitForTask(svc.url, id, isTerminal, 15_000, '?include=attempts');
    expect(t.status).to.equal('DEAD');
    expect(t.attempts).to.equal(3);
    expect(t.error).to.include({ message: 'boom', retryable: true });
    const h = t.attempt_history;
    expect(h.map((a: any) => a.attempt)).to.deep.equal([1, 2, 3]);
    expect(h.map((a: any) => a.outcome)).to.deep.equal(['RETRYING', 'RETRYING', 'DEAD']);
    const gap1 = Date.parse(h[1].started_at) - Date.parse(h[0].ended_at);
    const gap2 = Date.parse(h[2].started_at) - Date.parse(h[1].ended_at);
    expect(gap1, 'first backoff (0.2 s)').to.be.at.least(200);
    expect(gap2, 'second backoff (0.4 s, exponential)').to.be.at.least(400);
  });

  it('a PermanentError ends FAILED after one attempt', async () => {
    const id = await submit({ task_type: 'fail', payload: { permanent: true, message: 'bad input' }, max_retries: 5 });
    const t = await waitForTask(svc.url, id, isTerminal);
    expect(t.status).to.equal('FAILED');
    expect(t.attempts).to.equal(1);
    expect(t.error).to.include({ type: 'PermanentError', retryable: false });
  });

  it('a task that fails once then succeeds ends SUCCEEDED on attempt 2', async () => {
    const id = await submit({ task_type: 'fail', payload: { times: 1 }, retry_delay_seconds: 0, max_retries: 1 });
    const t = await waitForTask(svc.url, id, isTerminal);
    expect(t.status).to.equal('SUCCEEDED');
    expect(t.result).to.deep.equal({ succeeded_on_attempt: 2 });
  });

  it('cancel of a RUNNING task answers 202, aborts the handler, and ends CANCELLED', async () => {
    const id = await submit({ task_type: 'sleep', payload: { ms: 20_000 } });
    await waitForTask(svc.url, id, (t) => t.status === 'RUNNING');
    const res = await http('POST', `${svc.url}/api/v1/tasks/${id}/cancel`);
    expect(res.status).to.equal(202);
    const t = await waitForTask(svc.url, id, isTerminal);
    expect(t.status).to.equal('CANCELLED');
    expect(t.duration_ms).to.be.below(20_000);
    expect((await http('POST', `${svc.url}/api/v1/tasks/${id}/cancel`)).status).to.equal(409);
  });

  it('a task cancelled before its time never runs', async () => {
    const id = await submit({ task_type: 'echo', payload: 1, scheduled_at: new Date(Date.now() + 1500).toISOString() });
    expect((await http('POST', `${svc.url}/api/v1/tasks/${id}/cancel`)).status).to.equal(200);
    // A task due later than this one finishing proves the owner passed the cancelled one's due time.
    const later = await submit({ task_type: 'noop', scheduled_at: new Date(Date.now() + 1700).toISOString() });
    await waitForTask(svc.url, later, isTerminal);
    const t = (await http('GET', `${svc.url}/api/v1/tasks/${id}`)).body;
    expect(t.status).to.equal('CANCELLED');
    expect(t.attempts).to.equal(0);
    expect(t.started_at).to.equal(null);
  });

  it('a worker process killed mid-task is respawned and the task runs again as a new attempt', async () => {
    const id = await submit({ task_type: 'sleep', payload: { ms: 1500 }, max_retries: 2, retry_delay_seconds: 0 });
    await waitForTask(svc.url, id, (t) => t.status === 'RUNNING');
    for (const pid of svc.workerPids()) process.kill(pid, 'SIGKILL');
    const t = await waitForTask(svc.url, id, isTerminal, 20_000, '?include=attempts');
    expect(t.status).to.equal('SUCCEEDED');
    // Exactly two: the retry goes only to a worker whose respawn a ping has seen. (A third attempt
    // was seen once under load before a worker whose process had exited was taken out of dispatch
    // at its exit: the retry reached the other killed worker's new process before its ping.)
    expect(t.attempts).to.equal(2);
    const history = t.attempt_history as Array<{ outcome: string; error?: { type?: string } }>;
    expect(history.map((a) => [a.outcome, a.error?.type])).to.deep.equal([
      ['RETRYING', 'worker_lost'],
      ['SUCCEEDED', undefined],
    ]);
    const metrics = await (await fetch(`${svc.url}/metrics`)).text();
    expect(metrics).to.match(/scheduler_worker_restarts_total\{worker_id="worker-\d"\} [1-9]/);
  });

  it('unparseable HTTP gets a JSON error envelope on the socket, and the service keeps serving', async () => {
    const url = new URL(svc.url);
    const raw = await new Promise<string>((resolve, reject) => {
      const sock = net.connect(Number(url.port), url.hostname, () => sock.write('GET /healthz HTTP/1.1\r\nthis is not a header\r\n\r\n'));
      let data = '';
      sock.on('data', (d) => (data += d));
      sock.on('end', () => resolve(data));
      sock.on('error', reject);
    });
    expect(raw).to.match(/^HTTP\/1.1 400/);
    expect(JSON.parse(raw.split('\r\n\r\n')[1]).error.code).to.equal('MALFORMED_REQUEST');
    expect((await http('GET', `${svc.url}/healthz`)).status).to.equal(200);
  });

  it('a DEAD task replayed from the dead-letter queue runs again; its history shows both cycles', async () => {
    const id = await submit({ task_type: 'fail', payload: { times: 1, message: 'first cycle' }, max_retries: 0 });
    expect((await waitForTask(svc.url, id, isTerminal)).status).to.equal('DEAD');
    const listed = await http('GET', `${svc.url}/api/v1/dead-letter?task_type=fail`);
    expect(listed.body.tasks.map((t: any) => t.task_id)).to.include(id);
    expect((await http('POST', `${svc.url}/api/v1/dead-letter/${id}/replay`)).status).to.equal(200);
    const t = await waitForTask(svc.url, id, isTerminal, 15_000, '?include=attempts');
    expect(t.status).to.equal('SUCCEEDED');
    expect(t.result).to.deep.equal({ succeeded_on_attempt: 2 });
    expect(t.attempt_history.map((a: any) => [a.attempt, a.outcome])).to.deep.equal([
      [1, 'DEAD'],
      [2, 'SUCCEEDED'],
    ]);
  });
});
