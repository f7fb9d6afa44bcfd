import { expect } from 'chai';
import { trace } from '@opentelemetry/api';
import { Writable } from 'node:stream';
import pino from 'pino';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { TaskRunner } from '../../src/actors/worker/task-runner';
import { WorkItem, WorkResult } from '../../src/actors/protocol';
import { ManualClock } from '../../src/domain/clock';
import { HandlerContext, TaskHandler } from '../../src/handlers/types';
import { checkTraceparent, parseTraceparent } from '../../src/contract/traceparent';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';
const TRACEPARENT = `00-${TRACE_ID}-${PARENT}-01`;

async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
}

/** A pino logger writing JSON lines into `lines`. */
function capture(lines: Array<Record<string, unknown>>) {
  const stream = new Writable({
    write(chunk, _enc, cb) {
      for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      cb();
    },
  });
  return pino({ level: 'debug' }, stream);
}

describe('attempt tracing in the TaskRunner (issue 9)', () => {
  let seen: HandlerContext[];
  let reported: WorkResult[];
  let lines: Array<Record<string, unknown>>;
  const handlers = new Map<string, TaskHandler>([
    [
      'probe',
      (_p, ctx) => {
        seen.push(ctx);
        ctx.log('probe says hi', { n: 1 });
        return ctx.traceContext;
      },
    ],
    ['boom', () => Promise.reject(new Error('boom'))],
  ]);
  const item = (id: string, taskType: string, traceparent?: string): WorkItem => ({
    id,
    attempt: 1,
    taskType,
    payload: null,
    timeoutMs: 10_000,
    idempotencyKey: null,
    ...(traceparent ? { traceparent } : {}),
  });

  beforeEach(() => {
    seen = [];
    reported = [];
    lines = [];
  });

  it('without an SDK: ctx.traceContext continues the submitted trace with a span of its own, and log lines carry trace_id', async () => {
    const runner = new TaskRunner(handlers, (r) => reported.push(...r), new ManualClock(), { log: capture(lines) });
    runner.run([item('t1', 'probe', TRACEPARENT)]);
    await settle();
    const tc = seen[0].traceContext!;
    expect(tc.traceId).to.equal(TRACE_ID);
    expect(tc.spanId)
      .to.match(/^[0-9a-f]{16}$/)
      .and.not.equal(PARENT);
    expect(tc.traceparent).to.equal(`00-${TRACE_ID}-${tc.spanId}-01`);
    expect('invalid' in parseTraceparent(tc.traceparent)).to.equal(false);
    const probe = lines.find((l) => l.msg === 'probe says hi');
    expect(probe).to.include({ trace_id: TRACE_ID, span_id: tc.spanId, task_id: 't1', attempt: 1, n: 1 });
    expect(lines.filter((l) => l.task_id === 't1').every((l) => l.trace_id === TRACE_ID)).to.equal(true);
    expect(reported[0].outcome).to.deep.equal({ kind: 'succeeded', result: tc });
  });

  it('a task without traceparent gets traceContext null and untraced log lines', async () => {
    const runner = new TaskRunner(handlers, (r) => reported.push(...r), new ManualClock(), { log: capture(lines) });
    runner.run([item('t2', 'probe')]);
    await settle();
    expect(seen[0].traceContext).to.equal(null);
    expect(lines.find((l) => l.msg === 'probe says hi')).to.not.have.property('trace_id');
  });

  it('with an SDK: one span per attempt, a child of the submitted parent, ending with the outcome', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const runner = new TaskRunner(handlers, (r) => reported.push(...r), new ManualClock(), {
      tracer: provider.getTracer('test'),
      log: capture(lines),
    });
    runner.run([item('t3', 'probe', TRACEPARENT), item('t4', 'boom', TRACEPARENT)]);
    await settle();
    const spans = exporter.getFinishedSpans();
    expect(spans.map((s) => s.name).sort()).to.deep.equal(['task boom', 'task probe']);
    for (const s of spans) {
      expect(s.spanContext().traceId).to.equal(TRACE_ID);
      expect(s.parentSpanContext?.spanId).to.equal(PARENT);
    }
    const probe = spans.find((s) => s.name === 'task probe')!;
    expect(seen[0].traceContext?.spanId).to.equal(probe.spanContext().spanId);
    expect(probe.attributes).to.include({ 'scheduler.task_id': 't3', 'scheduler.attempt': 1, 'scheduler.outcome': 'succeeded' });
    const boom = spans.find((s) => s.name === 'task boom')!;
    expect(boom.status).to.include({ code: 2, message: 'boom' });
    expect(lines.find((l) => l.msg === 'attempt failed')).to.include({ task_id: 't4', trace_id: TRACE_ID, error_type: 'Error' });
    await provider.shutdown();
  });

  it('a global SDK registered after the runner was made: from then on an attempt without traceparent starts a trace', async () => {
    // The runner's default tracer is the API's proxy; with no provider behind it the attempt gets
    // no span at all (the untraced shortcut). The check is made per attempt.
    const runner = new TaskRunner(handlers, (r) => reported.push(...r), new ManualClock(), { log: capture(lines) });
    runner.run([item('before', 'probe')]);
    await settle();
    expect(seen[0].traceContext).to.equal(null);
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    expect(trace.setGlobalTracerProvider(provider)).to.equal(true);
    try {
      runner.run([item('after', 'probe')]);
      await settle();
      const spans = exporter.getFinishedSpans();
      expect(spans.map((s) => s.attributes['scheduler.task_id'])).to.deep.equal(['after']);
      expect(seen[1].traceContext?.spanId).to.equal(spans[0].spanContext().spanId);
      expect(lines.find((l) => l.msg === 'probe says hi' && l.task_id === 'after')).to.include({
        trace_id: spans[0].spanContext().traceId,
      });
    } finally {
      trace.disable();
      await provider.shutdown();
    }
  });

  it('checkTraceparent follows the W3C rules', () => {
    expect(checkTraceparent(undefined)).to.equal(null);
    expect(checkTraceparent(` ${TRACEPARENT} `)).to.equal(TRACEPARENT);
    expect(checkTraceparent(`01-${TRACE_ID}-${PARENT}-01-extra`)).to.equal(`01-${TRACE_ID}-${PARENT}-01-extra`);
    for (const bad of [
      'garbage',
      TRACEPARENT.toUpperCase(),
      `ff-${TRACE_ID}-${PARENT}-01`,
      `00-${'0'.repeat(32)}-${PARENT}-01`,
      `00-${TRACE_ID}-${'0'.repeat(16)}-01`,
      `${TRACEPARENT}-extra`,
      `00-${TRACE_ID}-${PARENT}`,
    ]) {
      expect(() => checkTraceparent(bad), bad)
        .to.throw(/traceparent/)
        .with.property('details')
        .that.includes({ field: 'traceparent' });
    }
  });
});
