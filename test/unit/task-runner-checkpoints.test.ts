import { expect } from 'chai';
import { TaskRunner } from '../../src/actors/worker/task-runner';
import { CheckpointReply, ProgressItem, WorkItem, WorkResult } from '../../src/actors/protocol';
import { MAX_CHECKPOINT_BYTES } from '../../src/domain/checkpoint';
import { ManualClock } from '../../src/domain/clock';
import { AttemptConflictError, SchedulerError, ValidationError } from '../../src/domain/errors';
import { HandlerContext, TaskHandler } from '../../src/handlers/types';

/** A handler that hands out its context and finishes when told. */
function held(): { handler: TaskHandler; ctx: () => HandlerContext; finish: (v?: unknown) => void } {
  let ctx: HandlerContext | null = null;
  let finish: (v?: unknown) => void = () => undefined;
  return {
    handler: (_p, c) => {
      ctx = c;
      return new Promise((resolve) => (finish = resolve));
    },
    ctx: () => ctx as unknown as HandlerContext,
    finish: (v) => finish(v),
  };
}

const item = (over: Partial<WorkItem> = {}): WorkItem => ({
  id: 't1',
  attempt: 2,
  taskType: 'long',
  payload: null,
  timeoutMs: 60_000,
  idempotencyKey: null,
  ...over,
});
const turn = () => new Promise((r) => setImmediate(r));

/** The worker side of checkpoints and progress (manual clock; the dispatcher is a stub). */
describe('TaskRunner: ctx.checkpoint, ctx.lastCheckpoint, ctx.progress', () => {
  it('gives the attempt the last checkpoint (null when none) and resolves a checkpoint once the dispatcher answers', async () => {
    const clock = new ManualClock();
    const h = held();
    const sent: Array<[string, number, unknown]> = [];
    let answer: (r: CheckpointReply) => void = () => undefined;
    const runner = new TaskRunner(new Map([['long', h.handler]]), () => undefined, clock, {
      checkpoint: (id, attempt, value) => {
        sent.push([id, attempt, value]);
        return new Promise((resolve) => (answer = resolve));
      },
    });
    runner.run([item({ lastCheckpoint: { next: 500 } })]);
    await turn();
    expect(h.ctx().lastCheckpoint).to.deep.equal({ next: 500 });
    let resolved = false;
    const saving = h
      .ctx()
      .checkpoint({ next: 1000 })
      .then(() => (resolved = true));
    await turn();
    expect(sent).to.deep.equal([['t1', 2, { next: 1000 }]]);
    expect(resolved, 'not before the dispatcher answered (the commit)').to.equal(false);
    answer({ ok: true, savedAt: 1, bytes: 13 });
    await saving;
    expect(resolved).to.equal(true);

    const h2 = held();
    const runner2 = new TaskRunner(new Map([['long', h2.handler]]), () => undefined, clock);
    runner2.run([item()]);
    await turn();
    expect(h2.ctx().lastCheckpoint).to.equal(null);
  });

  it('rejects a checkpoint over the cap, not JSON or nested deeper than 64 levels without sending it, and a refused one with its code', async () => {
    const clock = new ManualClock();
    const h = held();
    let sends = 0;
    const refusal = new AttemptConflictError('t1', 2, 'RETRYING', 2).toJSON().error;
    const runner = new TaskRunner(new Map([['long', h.handler]]), () => undefined, clock, {
      checkpoint: async () => {
        sends++;
        return { ok: false, error: refusal };
      },
    });
    runner.run([item()]);
    await turn();
    const big = await h
      .ctx()
      .checkpoint('x'.repeat(MAX_CHECKPOINT_BYTES))
      .catch((e: unknown) => e);
    expect(big).to.be.instanceOf(SchedulerError).and.include({ code: 'CHECKPOINT_TOO_LARGE' });
    expect(
      await h
        .ctx()
        .checkpoint(undefined)
        .catch((e: unknown) => e),
    ).to.be.instanceOf(ValidationError);
    let deep: unknown = 0;
    for (let i = 0; i < 3500; i++) deep = [deep];
    const tooDeep = await h
      .ctx()
      .checkpoint(deep)
      .catch((e: unknown) => e);
    expect(tooDeep, 'the next attempt’s run message carries it: bounded as a payload').to.be.instanceOf(ValidationError);
    expect((tooDeep as ValidationError).message).to.equal('checkpoint: nests deeper than 64 levels');
    expect(sends).to.equal(0);
    const stale = await h
      .ctx()
      .checkpoint({ next: 1 })
      .catch((e: unknown) => e);
    expect(stale).to.be.instanceOf(SchedulerError).and.include({ code: 'ATTEMPT_CONFLICT' });
    expect(sends).to.equal(1);
  });

  it('sends the latest progress of each attempt at most once per interval, and what is pending before the completion', async () => {
    const clock = new ManualClock();
    const h = held();
    const log: Array<['progress', ProgressItem[]] | ['completed', WorkResult[]]> = [];
    const runner = new TaskRunner(new Map([['long', h.handler]]), (results) => log.push(['completed', results]), clock, {
      progress: (reports) => log.push(['progress', reports]),
      progressIntervalMs: 1000,
    });
    runner.run([item()]);
    await turn();
    const ctx = h.ctx();
    ctx.progress(0.1);
    clock.advance(0);
    expect(log).to.deep.equal([['progress', [{ id: 't1', attempt: 2, value: 0.1 }]]]);
    for (let done = 1; done <= 300; done++) ctx.progress({ done, total: 1000 }); // per record: kept, not sent
    clock.advance(999);
    expect(log).to.have.length(1);
    clock.advance(1);
    expect(log[1]).to.deep.equal(['progress', [{ id: 't1', attempt: 2, value: { done: 300, total: 1000 } }]]);
    expect(() => ctx.progress(1.5)).to.throw(ValidationError);
    expect(() => ctx.progress({ done: 5, total: 2 } as never)).to.throw(ValidationError);
    ctx.progress({ done: 1000, total: 1000, message: 'done' });
    h.finish('ok');
    await turn();
    await turn(); // the completion goes out in the turn after the handler settled
    expect(log.slice(2).map((e) => e[0])).to.deep.equal(['progress', 'completed']);
    expect(log[2][1]).to.deep.equal([{ id: 't1', attempt: 2, value: { done: 1000, total: 1000, message: 'done' } }]);
    clock.advance(5000);
    expect(log).to.have.length(4); // nothing left to send
  });
});
