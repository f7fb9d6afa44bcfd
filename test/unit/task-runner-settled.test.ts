import { expect } from 'chai';
import { TaskRunner } from '../../src/actors/worker/task-runner';
import { WorkResult } from '../../src/actors/protocol';
import { ManualClock } from '../../src/domain/clock';
import { TaskHandler } from '../../src/handlers/types';

const flush = () => new Promise((r) => setImmediate(r));
const item = (id: string, timeoutMs = 60_000) => ({ id, attempt: 1, taskType: 'h', payload: null, timeoutMs, idempotencyKey: null });

/** An aborted attempt is reported at once; whether its handler still runs is said, and its stop later. */
describe('TaskRunner: handlers still running after their abort (manual clock)', () => {
  it('a handler that ignores its signal: the outcome says handlerRunning, and settled follows when it stops', async () => {
    const clock = new ManualClock();
    let finish: () => void = () => undefined;
    const handler: TaskHandler = () => new Promise<void>((resolve) => (finish = resolve));
    const reports: WorkResult[][] = [];
    const settled: Array<Array<{ id: string; attempt: number }>> = [];
    const runner = new TaskRunner(new Map([['h', handler]]), (r) => reports.push(r), clock, { settled: (a) => settled.push(a) });
    runner.run([item('cancelled'), item('timed-out', 500)]);
    await Promise.resolve();
    runner.abort('cancelled', 1);
    clock.advance(500);
    await flush();
    expect(reports.flat().map((r) => [r.id, r.outcome.kind, r.handlerRunning])).to.deep.equal([
      ['cancelled', 'cancelled', true],
      ['timed-out', 'failed', true],
    ]);
    expect(settled).to.deep.equal([]);
    finish(); // the last handler made: 'timed-out'
    await flush();
    expect(settled).to.deep.equal([[{ id: 'timed-out', attempt: 1 }]]);
  });

  it('a handler that stops on its signal in the same turn: no handlerRunning mark, no settled message', async () => {
    const clock = new ManualClock();
    const handler: TaskHandler = (_p, ctx) =>
      new Promise<void>((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)));
    const reports: WorkResult[][] = [];
    const settled: unknown[] = [];
    const runner = new TaskRunner(new Map([['h', handler]]), (r) => reports.push(r), clock, { settled: (a) => settled.push(a) });
    runner.run([item('t1')]);
    await Promise.resolve();
    runner.abort('t1', 1);
    await flush();
    expect(reports.flat()).to.have.length(1);
    expect(reports.flat()[0].outcome.kind).to.equal('cancelled');
    expect(reports.flat()[0]).to.not.have.property('handlerRunning');
    expect(settled).to.deep.equal([]);
  });

  it('an attempt that ends by itself is reported without the mark', async () => {
    const clock = new ManualClock();
    const reports: WorkResult[][] = [];
    const runner = new TaskRunner(new Map<string, TaskHandler>([['h', async () => 'ok']]), (r) => reports.push(r), clock, {
      settled: () => expect.fail('not aborted'),
    });
    runner.run([item('t1')]);
    await flush();
    await flush(); // the handler's promise settles in a later turn than run()'s
    expect(reports.flat()[0]).to.deep.equal({ id: 't1', attempt: 1, outcome: { kind: 'succeeded', result: 'ok' }, durationMs: 0 });
  });
});
