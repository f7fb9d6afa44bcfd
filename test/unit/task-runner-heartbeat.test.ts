import { expect } from 'chai';
import { TaskRunner } from '../../src/actors/worker/task-runner';
import { ManualClock } from '../../src/domain/clock';
import { HandlerContext, TaskHandler } from '../../src/handlers/types';

/** Worker heartbeats: automatic while attempts run, and on `ctx.heartbeat()`; silent when idle. */
describe('TaskRunner heartbeats (manual clock)', () => {
  it('reports running attempts every interval and on ctx.heartbeat(), nothing while idle', async () => {
    const clock = new ManualClock();
    let ctxOf: HandlerContext | null = null;
    let finish: () => void = () => undefined;
    const slow: TaskHandler = (_p, ctx) => {
      ctxOf = ctx;
      return new Promise<void>((resolve) => (finish = resolve));
    };
    const beats: Array<Array<{ id: string; attempt: number }>> = [];
    const runner = new TaskRunner(new Map([['slow', slow]]), () => undefined, clock);
    runner.startHeartbeats(1000, (a) => beats.push(a));
    clock.advance(1000);
    expect(beats).to.deep.equal([]); // idle: nothing to say
    runner.run([{ id: 't1', attempt: 2, taskType: 'slow', payload: null, timeoutMs: 60_000, idempotencyKey: null }]);
    await Promise.resolve();
    clock.advance(1000);
    expect(beats).to.deep.equal([[{ id: 't1', attempt: 2 }]]);
    (ctxOf as unknown as HandlerContext).heartbeat();
    (ctxOf as unknown as HandlerContext).heartbeat(); // debounced into one
    clock.advance(0);
    expect(beats).to.have.length(2);
    finish();
    await new Promise((r) => setImmediate(r));
    clock.advance(1000);
    expect(beats).to.have.length(2);
  });
});
