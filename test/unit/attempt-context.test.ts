import { expect } from 'chai';
import { TaskRunner } from '../../src/actors/worker/task-runner';
import type { ProgressItem, WorkItem, WorkResult } from '../../src/actors/protocol';
import { ManualClock } from '../../src/domain/clock';
import type { HandlerContext, TaskHandler } from '../../src/handlers/types';

const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};

describe("AttemptContext: a handler's ctx", () => {
  const item = (id: string, extra: Partial<WorkItem> = {}): WorkItem => ({
    id,
    attempt: 2,
    taskType: 'probe',
    payload: null,
    timeoutMs: 10_000,
    idempotencyKey: 'k-1',
    ...extra,
  });

  it('its members work when destructured (functions made once, kept), and its fields are its own', async () => {
    const clock = new ManualClock();
    const reported: WorkResult[] = [];
    const progress: ProgressItem[][] = [];
    const beats: Array<Array<{ id: string; attempt: number }>> = [];
    const checkpoints: unknown[] = [];
    let ctx: HandlerContext | null = null;
    const probe: TaskHandler = async (_p, c) => {
      ctx = c;
      const { log, heartbeat, progress: report, checkpoint, signal, taskId, attempt, idempotencyKey, upstreamResults, lastCheckpoint } = c;
      expect(c.log).to.equal(log);
      expect(c.checkpoint).to.equal(checkpoint);
      log('hello', { n: 1 });
      heartbeat();
      clock.advance(0); // the beat goes on the next timer turn, while the attempt runs
      report(0.5);
      await checkpoint({ at: 3 });
      expect(signal.aborted).to.equal(false);
      return { taskId, attempt, idempotencyKey, upstreamResults, lastCheckpoint };
    };
    const runner = new TaskRunner(new Map([['probe', probe]]), (r) => reported.push(...r), clock, {
      progress: (p) => progress.push(p),
      checkpoint: (_id, _attempt, value) => {
        checkpoints.push(value);
        return Promise.resolve({ ok: true, savedAt: 1, bytes: 8 });
      },
    });
    runner.heartbeatsOnRequest((a) => beats.push(a));
    runner.run([item('t1', { upstreamResults: { a: 1 }, lastCheckpoint: { at: 2 } })]);
    await settle();
    expect(reported[0].outcome).to.deep.equal({
      kind: 'succeeded',
      result: { taskId: 't1', attempt: 2, idempotencyKey: 'k-1', upstreamResults: { a: 1 }, lastCheckpoint: { at: 2 } },
    });
    expect(checkpoints).to.deep.equal([{ at: 3 }]);
    expect(progress.flat()).to.deep.equal([{ id: 't1', attempt: 2, value: 0.5 }]);
    expect(beats).to.deep.equal([[{ id: 't1', attempt: 2 }]]);
    expect(Object.keys(ctx!).sort()).to.deep.equal([
      'attempt',
      'idempotencyKey',
      'lastCheckpoint',
      'taskId',
      'traceContext',
      'upstreamResults',
    ]);
  });

  it('outside a workflow: upstreamResults is an empty object of its own, lastCheckpoint null', async () => {
    const seen: HandlerContext[] = [];
    const runner = new TaskRunner(
      new Map([['probe', (_p: unknown, c: HandlerContext) => void seen.push(c)]]),
      () => undefined,
      new ManualClock(),
    );
    runner.run([item('a'), item('b')]);
    await settle();
    expect(seen[0].upstreamResults).to.deep.equal({});
    expect(seen[0].upstreamResults).not.to.equal(seen[1].upstreamResults);
    expect(seen[0].lastCheckpoint).to.equal(null);
  });

  it('a member can be replaced (middleware wrapping ctx.log), and a proxy of ctx reads through', async () => {
    const lines: string[] = [];
    let viaProxy: string | null = null;
    const probe: TaskHandler = (_p, c) => {
      const inner = c.log;
      c.log = (message, fields) => {
        lines.push(message);
        inner(message, fields);
      };
      c.log('wrapped');
      const proxy = new Proxy(c, {});
      viaProxy = `${proxy.taskId}:${proxy.signal.aborted}:${typeof proxy.progress}`;
      proxy.log('through the proxy');
    };
    const runner = new TaskRunner(new Map([['probe', probe]]), () => undefined, new ManualClock());
    runner.run([item('t9')]);
    await settle();
    expect(lines).to.deep.equal(['wrapped', 'through the proxy']);
    expect(viaProxy).to.equal('t9:false:function');
  });
});
