import { expect } from 'chai';
import { isTerminal, waitForTask } from '../helpers/http';
import { OtlpReceiver, ReceivedSpan } from '../helpers/otlp-receiver';
import { serviceConfigEnv } from '../helpers/service-config';
import { ServiceProcess, startServiceProcess } from '../helpers/service-process';
import { tempDir } from '../helpers/temp-dir';

const TRACE_ID = '5b8efff798038103d269b633813fc60c';
const CALLER_SPAN = 'eee19b7ec3c1b174';
const OTLP = { SERVER: 2, INTERNAL: 1, CONSUMER: 5 };
const STATUS = { OK: 1, ERROR: 2 };
const NS_PER_MS = 1_000_000n;

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

/** The one span of `spans` named `name` (and of `attempt`, when given). */
function one(spans: ReceivedSpan[], name: string, attempt?: number): ReceivedSpan {
  const found = spans.filter((s) => s.name === name && (attempt === undefined || s.attributes['scheduler.attempt'] === attempt));
  expect(
    found,
    `${name} ${attempt ?? ''}: ${spans.map((s) => `${s.name}/${s.attributes['scheduler.attempt']}`).join(', ')}`,
  ).to.have.length(1);
  return found[0];
}

/** A service exporting its spans over OTLP/HTTP to `receiver`, its batch processor sending every `exportDelayMs`. */
function tracedService(dir: string, receiver: OtlpReceiver, exportDelayMs: number): Promise<ServiceProcess> {
  return startServiceProcess(dir, {
    ...serviceConfigEnv(dir, { otlpTracesEndpoint: receiver.url, tracesExportDelayMs: exportDelayMs }),
    OTEL_TRACES_EXPORTER: 'otlp',
    WORKERS: '1',
  });
}

describe('one trace per task: submission → queue wait → attempts, exported over OTLP/HTTP (real process)', function () {
  this.timeout(60_000);
  const receiver = new OtlpReceiver();
  const dir = tempDir();
  let svc: ServiceProcess;
  before(async () => {
    await receiver.start();
    svc = await tracedService(dir.path, receiver, 100);
  });
  after(async () => {
    await svc?.stop();
    await receiver.close();
    dir.remove();
  });

  it('a task that fails once then succeeds: the submission span, then wait + attempt 1 (error), wait + attempt 2 (ok), in one trace', async () => {
    const sub = await post(
      `${svc.url}/api/v1/tasks`,
      {
        task_type: 'fail',
        payload: { times: 1, message: 'first try fails' },
        max_retries: 2,
        retry_backoff: 'fixed',
        retry_delay_seconds: 0.3,
        queue: 'traced',
      },
      { traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01` },
    );
    expect(sub.status).to.equal(202);
    const id = sub.body.task_id as string;
    const task = await waitForTask(svc.url, id, isTerminal);
    expect(task.status).to.equal('SUCCEEDED');
    expect(task.attempts).to.equal(2);

    const spans = (await receiver.waitFor(() => receiver.spansOf(id).length >= 5)).filter((s) => s.attributes['scheduler.task_id'] === id);
    expect(spans, spans.map((s) => s.name).join(', ')).to.have.length(5);
    const submit = one(spans, 'submit fail');
    const wait1 = one(spans, 'wait fail', 1);
    const run1 = one(spans, 'task fail', 1);
    const wait2 = one(spans, 'wait fail', 2);
    const run2 = one(spans, 'task fail', 2);

    // One trace: the caller's; the submission span is the caller's child, everything else the submission's.
    for (const s of spans) expect(s.traceId, s.name).to.equal(TRACE_ID);
    expect(submit.parentSpanId).to.equal(CALLER_SPAN);
    expect(submit.kind).to.equal(OTLP.SERVER);
    for (const s of [wait1, run1, wait2, run2]) expect(s.parentSpanId, s.name).to.equal(submit.spanId);
    // The task keeps the submission span's context: that is what every attempt continues.
    expect(task.traceparent).to.equal(`00-${TRACE_ID}-${submit.spanId}-01`);

    // In time order: each span starts no earlier than the one before (the service's spans are on
    // its millisecond clock, the attempts' on the worker's: ≤ 1 ms of rounding between them).
    const order = [submit, wait1, run1, wait2, run2];
    for (let i = 1; i < order.length; i++)
      expect(order[i].start + NS_PER_MS >= order[i - 1].start, `${order[i].name} before ${order[i - 1].name}`).to.equal(true);
    // A queue wait ends at its claim, before its attempt starts; the retry waits from its due time,
    // which is the retry delay (300 ms, fixed) after the first attempt ended.
    expect(wait1.end <= run1.start + NS_PER_MS).to.equal(true);
    expect(wait2.end <= run2.start + NS_PER_MS).to.equal(true);
    expect(wait2.start >= run1.end + 250n * NS_PER_MS, `retry due ${(wait2.start - run1.end) / NS_PER_MS} ms after attempt 1`).to.equal(
      true,
    );
    expect(wait1.start >= BigInt(Date.parse(task.created_at)) * NS_PER_MS).to.equal(true);

    // Outcomes and attributes.
    expect(run1.statusCode).to.equal(STATUS.ERROR);
    expect(run1.statusMessage).to.equal('first try fails');
    expect(run1.attributes).to.include({ 'scheduler.outcome': 'failed', 'scheduler.attempt': 1 });
    expect(run2.statusCode).to.equal(STATUS.OK);
    expect(run2.attributes).to.include({ 'scheduler.outcome': 'succeeded', 'scheduler.attempt': 2 });
    expect(run1.kind).to.equal(OTLP.CONSUMER);
    expect(wait1.kind).to.equal(OTLP.INTERNAL);
    for (const s of spans) {
      expect(s.attributes, s.name).to.include({
        'scheduler.task_id': id,
        'scheduler.task_type': 'fail',
        'scheduler.tenant': 'default',
        'scheduler.queue': 'traced',
      });
    }
    expect(submit.attributes['scheduler.outcome']).to.equal('accepted');
    expect(wait1.attributes['scheduler.outcome']).to.equal('claimed');
    expect(receiver.rejected).to.equal(0);
  });

  it('without a caller traceparent the submission span starts the trace; a refused submission is an error span', async () => {
    const sub = await post(`${svc.url}/api/v1/tasks`, { task_type: 'noop' });
    const id = sub.body.task_id as string;
    const task = await waitForTask(svc.url, id, isTerminal);
    const spans = await receiver.waitFor(() => receiver.spansOf(id).length >= 3).then(() => receiver.spansOf(id));
    const submit = one(spans, 'submit noop');
    expect(submit.parentSpanId).to.equal(undefined);
    expect(task.traceparent).to.equal(`00-${submit.traceId}-${submit.spanId}-01`);
    for (const s of spans) expect(s.traceId).to.equal(submit.traceId);
    expect(one(spans, 'task noop').parentSpanId).to.equal(submit.spanId);

    const refused = await post(
      `${svc.url}/api/v1/tasks`,
      { task_type: 'noop', priority: 'urgent' },
      { traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01` },
    );
    expect(refused.status).to.equal(400);
    const [bad] = await receiver
      .waitFor((all) => all.some((s) => s.name === 'submit task' && s.statusCode === STATUS.ERROR))
      .then((all) => all.filter((s) => s.name === 'submit task' && s.statusCode === STATUS.ERROR));
    expect(bad.parentSpanId).to.equal(CALLER_SPAN);
    expect(bad.attributes).to.include({ 'scheduler.outcome': 'error', 'error.type': 'VALIDATION_FAILED' });
  });

  it('a batch is one submission span whose trace every task of it joins', async () => {
    const res = await post(`${svc.url}/api/v1/tasks/batch`, { tasks: [{ task_type: 'noop' }, { task_type: 'echo', payload: 1 }] });
    expect(res.status).to.equal(202);
    const ids = (res.body.tasks as Array<{ task_id: string }>).map((t) => t.task_id);
    for (const id of ids) await waitForTask(svc.url, id, isTerminal);
    await receiver.waitFor(() => ids.every((id) => receiver.spansOf(id).length >= 2));
    const batch = receiver.spans.filter((s) => s.name === 'submit batch' && s.attributes['scheduler.task_count'] === 2);
    expect(batch).to.have.length(1);
    for (const id of ids) {
      for (const s of receiver.spansOf(id)) {
        expect(s.traceId).to.equal(batch[0].traceId);
        expect(s.parentSpanId).to.equal(batch[0].spanId);
      }
    }
  });
});

describe('spans still queued at a graceful stop are exported (real process)', function () {
  this.timeout(60_000);
  const receiver = new OtlpReceiver();
  const dir = tempDir();
  let svc: ServiceProcess | null = null;
  before(() => receiver.start());
  after(async () => {
    await svc?.stop();
    await receiver.close();
    dir.remove();
  });

  it('with an export delay of 10 minutes, SIGTERM still delivers the submission, wait and attempt spans', async () => {
    svc = await tracedService(dir.path, receiver, 600_000);
    const sub = await post(`${svc.url}/api/v1/tasks`, { task_type: 'noop' });
    const id = sub.body.task_id as string;
    expect((await waitForTask(svc.url, id, isTerminal)).status).to.equal('SUCCEEDED');
    expect(receiver.spansOf(id)).to.have.length(0); // nothing exported yet: the delay has not passed
    await svc.stop();
    expect(svc.child.exitCode).to.equal(0);
    const names = receiver.spansOf(id).map((s) => s.name);
    expect(names).to.have.members(['submit noop', 'wait noop', 'task noop']);
  });
});
