import { expect } from 'chai';
import pino from 'pino';
import { Writable } from 'node:stream';
import { TaskCancelledError, TaskRunner, TaskTimeoutError } from '../../src/actors/worker/task-runner';
import { WorkResult } from '../../src/actors/protocol';
import { ManualClock } from '../../src/domain/clock';
import { HandlerContext, TaskHandler } from '../../src/handlers/types';

const flush = () => new Promise((r) => setImmediate(r));

/** A handler that never settles on its own; it records the signal it got. */
function hanging(signals: AbortSignal[]): TaskHandler {
  return (_p, ctx: HandlerContext) => {
    signals.push(ctx.signal);
    return new Promise<void>(() => undefined);
  };
}

/** Timeout and cancel end an attempt once, by the runner, whatever the handler does afterwards. */
describe('TaskRunner timeout and cancel (manual clock)', () => {
  it('a timeout fires the signal with TaskTimeoutError and reports one failed "timeout" outcome', async () => {
    const clock = new ManualClock();
    const signals: AbortSignal[] = [];
    const reports: WorkResult[][] = [];
    const runner = new TaskRunner(new Map([['hang', hanging(signals)]]), (r) => reports.push(r), clock);
    runner.run([{ id: 't1', attempt: 1, taskType: 'hang', payload: null, timeoutMs: 500, idempotencyKey: null }]);
    await Promise.resolve();
    clock.advance(499);
    await flush();
    expect(reports).to.deep.equal([]);
    clock.advance(1);
    expect(signals[0].aborted).to.equal(true);
    expect(signals[0].reason).to.be.instanceOf(TaskTimeoutError);
    expect(runner.running).to.equal(0);
    await flush();
    expect(reports).to.have.length(1);
    expect(reports[0][0]).to.deep.include({ id: 't1', attempt: 1, durationMs: 500 });
    expect(reports[0][0].outcome).to.deep.include({ kind: 'failed', errorType: 'timeout', permanent: false });
  });

  it('an attempt aborted before its handler was called (the same turn as its start) never calls the handler, and needs no kill', async () => {
    const clock = new ManualClock();
    let calls = 0;
    const reports: WorkResult[][] = [];
    const settled: Array<{ id: string; attempt: number }> = [];
    const runner = new TaskRunner(
      new Map<string, TaskHandler>([
        [
          'h',
          async () => {
            calls++;
          },
        ],
      ]),
      (r) => reports.push(r),
      clock,
      { settled: (s) => settled.push(...s) },
    );
    runner.run([{ id: 't1', attempt: 1, taskType: 'h', payload: null, timeoutMs: 500, idempotencyKey: null }]);
    runner.abort('t1', 1);
    await flush();
    expect(calls, 'the handler of a cancelled attempt is not called').to.equal(0);
    expect(reports).to.have.length(1);
    expect(reports[0][0].outcome.kind).to.equal('cancelled');
    expect(reports[0][0].handlerRunning, 'no handler runs: nothing for the dispatcher to kill').to.equal(undefined);
    expect(settled).to.deep.equal([]);
  });

  it('abort() reports "cancelled" once; a handler that then resolves adds nothing; a stale attempt number is ignored', async () => {
    const clock = new ManualClock();
    let settle: () => void = () => undefined;
    const signals: AbortSignal[] = [];
    const handler: TaskHandler = (_p, ctx) => {
      signals.push(ctx.signal);
      return new Promise<void>((resolve) => (settle = resolve));
    };
    const reports: WorkResult[][] = [];
    const runner = new TaskRunner(new Map([['h', handler]]), (r) => reports.push(r), clock);
    runner.run([{ id: 't1', attempt: 3, taskType: 'h', payload: null, timeoutMs: 60_000, idempotencyKey: null }]);
    await Promise.resolve();
    runner.abort('t1', 2); // an earlier attempt's cancel: not this one
    expect(signals[0].aborted).to.equal(false);
    runner.abort('t1', 3);
    expect(signals[0].reason).to.be.instanceOf(TaskCancelledError);
    settle();
    runner.abort('t1', 3);
    await flush();
    clock.advance(60_000); // the timeout timer was cleared
    await flush();
    expect(reports.flat().map((r) => r.outcome.kind)).to.deep.equal(['cancelled']);
  });

  it('a handler that breaks its signal still gets its timeout reported, and the worker keeps running', async () => {
    const clock = new ManualClock();
    const handler: TaskHandler = (_p, ctx) => {
      (ctx.signal as unknown as { dispatchEvent: () => never }).dispatchEvent = () => {
        throw new Error('broken');
      };
      return new Promise<void>(() => undefined);
    };
    const reports: WorkResult[][] = [];
    const runner = new TaskRunner(new Map([['h', handler]]), (r) => reports.push(r), clock);
    runner.run([{ id: 't1', attempt: 1, taskType: 'h', payload: null, timeoutMs: 100, idempotencyKey: null }]);
    await Promise.resolve();
    expect(() => clock.advance(100)).to.not.throw();
    expect(runner.running).to.equal(0);
    await flush();
    expect(reports.flat().map((r) => r.outcome.kind)).to.deep.equal(['failed']);
  });

  it('makes no per-attempt log lines below debug, and ctx.log still writes with the attempt fields', async () => {
    const clock = new ManualClock();
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        cb();
      },
    });
    const log = pino({ level: 'info' }, sink);
    const quiet: TaskHandler = () => 'ok';
    const chatty: TaskHandler = (_p, ctx) => ctx.log('hello', { n: 1 });
    const runner = new TaskRunner(
      new Map([
        ['quiet', quiet],
        ['chatty', chatty],
      ]),
      () => undefined,
      clock,
      { log },
    );
    runner.run([
      { id: 'q1', attempt: 1, taskType: 'quiet', payload: null, timeoutMs: 1000, idempotencyKey: null },
      { id: 'c1', attempt: 2, taskType: 'chatty', payload: null, timeoutMs: 1000, idempotencyKey: null },
    ]);
    await flush();
    await flush();
    expect(lines).to.have.length(1);
    expect(lines[0]).to.deep.include({ msg: 'hello', n: 1, task_id: 'c1', attempt: 2, task_type: 'chatty' });
  });
  it('a handler that reads ctx.signal only after a cancel or a timeout gets it already aborted, with the reason', async () => {
    const clock = new ManualClock();
    const contexts: HandlerContext[] = [];
    const handler: TaskHandler = (_p, ctx) => {
      contexts.push(ctx); // the signal is not read yet
      return new Promise<void>(() => undefined);
    };
    const runner = new TaskRunner(new Map([['h', handler]]), () => undefined, clock);
    runner.run([
      { id: 'c', attempt: 1, taskType: 'h', payload: null, timeoutMs: 60_000, idempotencyKey: null },
      { id: 't', attempt: 1, taskType: 'h', payload: null, timeoutMs: 100, idempotencyKey: null },
      { id: 'r', attempt: 1, taskType: 'h', payload: null, timeoutMs: 60_000, idempotencyKey: null },
    ]);
    await flush();
    runner.abort('c', 1);
    clock.advance(100);
    const [cancelled, timedOut, running] = contexts.map((c) => c.signal);
    expect(cancelled.aborted).to.equal(true);
    expect(cancelled.reason).to.be.instanceOf(TaskCancelledError);
    expect(timedOut.aborted).to.equal(true);
    expect(timedOut.reason).to.be.instanceOf(TaskTimeoutError);
    expect(running.aborted).to.equal(false);
    expect(contexts[2].signal).to.equal(running); // one signal per attempt
    runner.abort('r', 1);
    expect(running.reason).to.be.instanceOf(TaskCancelledError);
  });
});
