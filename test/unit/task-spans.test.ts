import { expect } from 'chai';
import { BasicTracerProvider, InMemorySpanExporter, ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { inSubmissionSpan, queuesOf, TaskSpans } from '../../src/observability/task-spans';
import { ManualClock } from '../../src/domain/clock';
import { ValidationError } from '../../src/domain/errors';
import type { ClaimedTask, DueEntry } from '../../src/domain/task';
import { takeWorkItem } from '../../src/actors/dispatcher/work-item';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';
const TRACEPARENT = `00-${TRACE_ID}-${PARENT}-01`;

/** An epoch ms instant (the SDK reads a small number as a performance-clock time, not an epoch one). */
const T0 = Date.UTC(2026, 0, 1);

/** Epoch ms of an OpenTelemetry high-resolution time. */
const ms = (t: [number, number]) => t[0] * 1000 + t[1] / 1e6;

function claimed(id: string, over: Partial<ClaimedTask> = {}): ClaimedTask {
  return {
    id,
    attempt: 2,
    taskType: 'echo',
    payload: null,
    timeoutSeconds: 30,
    idempotencyKey: null,
    dueAt: T0 + 1_000,
    retry: { maxRetries: 3, backoff: 'fixed', delaySeconds: 1 },
    partition: 0,
    tenantId: 'acme',
    startedAt: T0 + 1_250,
    ...over,
  };
}

const entry = (id: string, queue?: string): DueEntry => ({
  id,
  partition: 0,
  seq: 1,
  dueAt: T0 + 1_000,
  priority: 'medium',
  tenantId: 'acme',
  taskType: 'echo',
  state: 'PENDING',
  ...(queue ? { queue } : {}),
});

describe('the service process spans of a task (TaskSpans)', () => {
  let exporter: InMemorySpanExporter;
  let provider: BasicTracerProvider;
  let spans: TaskSpans;
  const finished = (): ReadableSpan[] => exporter.getFinishedSpans();
  beforeEach(() => {
    exporter = new InMemorySpanExporter();
    provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    spans = new TaskSpans(provider.getTracer('test'));
  });
  afterEach(() => provider.shutdown());

  it('a submission span is the caller traceparent’s child and its context is what the task keeps', async () => {
    const clock = new ManualClock(T0 + 5_000);
    const kept = await inSubmissionSpan(spans, clock, 'submit task', ` ${TRACEPARENT} `, async (span) => {
      span?.describe([{ id: 't1', taskType: 'echo', tenantId: 'acme', queue: 'q' }]);
      clock.advance(7);
      return span?.traceparent;
    });
    const [s] = finished();
    expect(s.name).to.equal('submit echo');
    expect(s.kind).to.equal(SpanKind.SERVER);
    expect(s.spanContext().traceId).to.equal(TRACE_ID);
    expect(s.parentSpanContext?.spanId).to.equal(PARENT);
    expect(kept).to.equal(`00-${TRACE_ID}-${s.spanContext().spanId}-01`);
    expect(s.attributes).to.include({
      'scheduler.task_id': 't1',
      'scheduler.tenant': 'acme',
      'scheduler.queue': 'q',
      'scheduler.outcome': 'accepted',
    });
    expect([ms(s.startTime), ms(s.endTime)]).to.deep.equal([T0 + 5_000, T0 + 5_007]);
  });

  it('a refused submission ends its span with status error and the error code, and the error is rethrown', async () => {
    const run = inSubmissionSpan(spans, new ManualClock(T0), 'submit batch', 'not-a-traceparent', async () => {
      throw new ValidationError('priority', 'bad priority');
    });
    await run.then(
      () => expect.fail('should throw'),
      (err) => expect(err).to.be.instanceOf(ValidationError),
    );
    const [s] = finished();
    expect(s.parentSpanContext).to.equal(undefined); // a malformed traceparent starts a new trace
    expect(s.status).to.include({ code: SpanStatusCode.ERROR, message: 'priority: bad priority' });
    expect(s.attributes).to.include({ 'error.type': 'VALIDATION_FAILED', 'scheduler.outcome': 'error' });
  });

  it('without TaskSpans nothing is made and run gets null', async () => {
    expect(await inSubmissionSpan(null, new ManualClock(T0), 'submit task', TRACEPARENT, async (span) => span)).to.equal(null);
  });

  it('queue waits run from the due time to the claim, children of the stored context; tasks without one get none', () => {
    spans.queueWaits([claimed('a', { traceparent: TRACEPARENT }), claimed('b')], queuesOf([entry('a', 'reports'), entry('b')]));
    const all = finished();
    expect(all).to.have.length(1);
    const [w] = all;
    expect(w.name).to.equal('wait echo');
    expect(w.parentSpanContext?.spanId).to.equal(PARENT);
    expect(w.spanContext().traceId).to.equal(TRACE_ID);
    expect([ms(w.startTime), ms(w.endTime)]).to.deep.equal([T0 + 1_000, T0 + 1_250]);
    expect(w.attributes).to.include({
      'scheduler.task_id': 'a',
      'scheduler.attempt': 2,
      'scheduler.tenant': 'acme',
      'scheduler.queue': 'reports',
      'scheduler.outcome': 'claimed',
    });
  });

  it('an external hand-off is a PRODUCER span whose context goes to the consumer; a failed XADD is an error', () => {
    const ok = spans.handOff(claimed('a', { traceparent: TRACEPARENT }), 'ext');
    const failed = spans.handOff(claimed('b', { traceparent: TRACEPARENT }), 'ext');
    expect(spans.handOff(claimed('c'), 'ext')).to.equal(null);
    ok?.end(T0 + 1_260);
    failed?.end(T0 + 1_261, 'could not append');
    const [a, b] = finished();
    expect(a.name).to.equal('publish ext');
    expect(a.kind).to.equal(SpanKind.PRODUCER);
    expect(ok?.traceparent).to.equal(`00-${TRACE_ID}-${a.spanContext().spanId}-01`);
    expect(a.parentSpanContext?.spanId).to.equal(PARENT);
    expect(a.attributes).to.include({ 'scheduler.queue': 'ext', 'scheduler.outcome': 'appended' });
    expect(b.status).to.include({ code: SpanStatusCode.ERROR, message: 'could not append' });
    expect(b.attributes).to.include({ 'error.type': 'dispatch_failed' });
  });

  it('the run message carries tenant and queue only while tracing', () => {
    const t = claimed('a', { traceparent: TRACEPARENT });
    expect(takeWorkItem(t)).to.not.have.any.keys('tenant', 'queue');
    expect(takeWorkItem(t, { queue: 'reports' })).to.include({ tenant: 'acme', queue: 'reports', traceparent: TRACEPARENT });
  });
});
