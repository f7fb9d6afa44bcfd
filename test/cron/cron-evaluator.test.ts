import path from 'node:path';
import { expect } from 'chai';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ManualClock } from '../../src/domain/clock';
import { TaskSpans } from '../../src/observability/task-spans';
import { cronInstanceId, OverlapPolicy } from '../../src/domain/cron/cron-definition';
import { tempDir } from '../helpers/temp-dir';
import { T0, advance, cronTestConfig, evaluatorNode, EvaluatorNode, firesOf, runToSuccess, settle } from './cron-harness';

const SECOND = 1000;
const MINUTE = 60 * SECOND;

describe('cron evaluator (manual clock)', () => {
  let dir: ReturnType<typeof tempDir>;
  let clock: ManualClock;
  const nodes: EvaluatorNode[] = [];
  const open = async (overrides: Record<string, unknown> = {}) => {
    const node = await evaluatorNode(path.join(dir.path, 'cron.db'), clock, cronTestConfig(overrides));
    nodes.push(node);
    return node;
  };

  beforeEach(() => {
    dir = tempDir();
    clock = new ManualClock(T0 + 500);
  });
  afterEach(async () => {
    for (const n of nodes.splice(0)) await n.close();
    dir.remove();
  });

  it('fires an every-second cron once per second with ids cron-<id>-<fire ms>, on time', async () => {
    const a = await open();
    const cron = await a.crons.create({ name: 'tick', cron_expression: '* * * * * *', task_type: 'noop' });
    a.evaluator.start();
    for (let i = 0; i < 5; i++) {
      await advance(clock, i === 0 ? SECOND / 2 : SECOND, [a]); // to T0+1s exactly, then each second
      await runToSuccess(
        a.store,
        a.instances.map((e) => e.id),
        clock.now(),
      ); // a worker runs each
    }
    const expected = [1, 2, 3, 4, 5].map((s) => T0 + s * SECOND);
    expect(a.instances.map((e) => e.id)).to.deep.equal(expected.map((t) => cronInstanceId(cron.cron_id as string, t)));
    const fires = await firesOf(a.store, cron.cron_id as string);
    expect(fires.map((f) => [f.fireTime, f.outcome, f.recordedAt - f.fireTime])).to.deep.equal(expected.map((t) => [t, 'created', 0]));
    const task = await a.store.getTask(a.instances[0].id);
    expect(task).to.include({ state: 'SUCCEEDED', taskType: 'noop', scheduledAt: expected[0], dueAt: expected[0], cronId: cron.cron_id });
  });

  it('while tracing, each instance keeps the context of its own `fire` span (the root of its trace)', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    try {
      const node = await evaluatorNode(path.join(dir.path, 'cron.db'), clock, cronTestConfig(), new TaskSpans(provider.getTracer('test')));
      nodes.push(node);
      const cron = await node.crons.create({ name: 'tick', cron_expression: '* * * * * *', task_type: 'noop' });
      node.evaluator.start();
      for (const step of [SECOND / 2, SECOND]) {
        await advance(clock, step, [node]);
        await runToSuccess(
          node.store,
          node.instances.map((e) => e.id),
          clock.now(),
        ); // ended: the next one is not an overlap
      }
      expect(node.instances).to.have.length(2);
      const fires = exporter.getFinishedSpans();
      expect(fires.map((s) => s.name)).to.deep.equal(['fire noop', 'fire noop']);
      for (const [i, e] of node.instances.entries()) {
        const span = fires[i];
        expect(span.parentSpanContext).to.equal(undefined);
        expect(span.attributes).to.include({
          'scheduler.task_id': e.id,
          'scheduler.cron_id': cron.cron_id,
          'scheduler.outcome': 'accepted',
        });
        const task = await node.store.getTask(e.id);
        expect(task?.traceparent).to.equal(`00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`);
      }
    } finally {
      await provider.shutdown();
    }
  });

  it('two evaluators on one SQLite file, 1,000 every-second crons for 10 s: exactly one instance per cron per second', async function () {
    this.timeout(120_000);
    const a = await open();
    const b = await open();
    const ids: string[] = [];
    for (let i = 0; i < 1000; i++) {
      ids.push((await a.crons.create({ name: `c${i}`, cron_expression: '* * * * * *', task_type: 'noop' })).cron_id as string);
    }
    a.evaluator.start();
    b.evaluator.start();
    await settle([a, b]);
    for (let s = 0; s < 10; s++) {
      await advance(clock, SECOND, [a, b]);
      await runToSuccess(
        a.store,
        [...a.instances, ...b.instances].map((e) => e.id),
        clock.now(),
      );
    }
    const seconds = Array.from({ length: 10 }, (_, i) => T0 + (i + 1) * SECOND);
    for (const id of ids) {
      const fires = await firesOf(a.store, id);
      expect(
        fires.map((f) => f.fireTime),
        id,
      ).to.deep.equal(seconds);
      expect(fires.every((f) => f.outcome === 'created' && f.taskId === cronInstanceId(id, f.fireTime))).to.equal(true);
    }
    const created = [...a.instances, ...b.instances].map((e) => e.id);
    expect(created).to.have.length(10_000);
    expect(new Set(created).size).to.equal(10_000);
    // Both raced for every instant: the loser's compare-and-set failed instead of firing twice.
    expect(a.lost + b.lost).to.be.at.least(1000);
    expect((await a.store.countByState()).SUCCEEDED).to.equal(10_000);
  });

  it('more definitions due at one instant than cronWindowMax: every one fires on time, each second (the window read on once emptied)', async function () {
    this.timeout(120_000);
    // Defined through another node (whose evaluator then stops), so this one's first read is cut.
    const other = await open();
    const ids: string[] = [];
    for (let i = 0; i < 350; i++) {
      ids.push((await other.crons.create({ name: `c${i}`, cron_expression: '* * * * * *', task_type: 'noop' })).cron_id as string);
    }
    await settle([other]);
    other.evaluator.stop();
    const a = await open({ cronWindowMax: 100 });
    a.evaluator.start();
    await settle([a]);
    for (let s = 0; s < 5; s++) {
      await advance(clock, s === 0 ? SECOND / 2 : SECOND, [a]);
      await runToSuccess(
        a.store,
        a.instances.map((e) => e.id),
        clock.now(),
      );
    }
    const seconds = Array.from({ length: 5 }, (_, i) => T0 + (i + 1) * SECOND);
    for (const id of ids) {
      const fires = await firesOf(a.store, id);
      expect(
        fires.map((f) => [f.fireTime, f.outcome, f.recordedAt - f.fireTime]),
        id,
      ).to.deep.equal(seconds.map((t) => [t, 'created', 0]));
    }
    expect(a.instances).to.have.length(350 * 5);
  });

  describe('downtime: the evaluator is stopped for 10 minutes and 30 s, then a new one starts', () => {
    it('none creates nothing for the gap, latest one instance, all every missed one in order', async () => {
      const a = await open();
      const made: Record<string, string> = {};
      for (const mode of ['none', 'latest', 'all'] as const) {
        made[mode] = (await a.crons.create({ name: mode, cron_expression: '* * * * *', task_type: 'noop', catch_up: mode }))
          .cron_id as string;
      }
      a.evaluator.start();
      await advance(clock, MINUTE, [a]); // fires T0+1m for all three
      await runToSuccess(
        a.store,
        a.instances.map((e) => e.id),
        clock.now(),
      );
      a.evaluator.stop();
      await settle([a]);
      clock.advance(10 * MINUTE + 30 * SECOND); // nobody evaluates: T0+2m … T0+11m are missed
      const b = await open();
      b.evaluator.start();
      await settle([b]);
      const missed = Array.from({ length: 10 }, (_, i) => T0 + (i + 2) * MINUTE);
      const after = async (id: string) => (await firesOf(b.store, id)).filter((f) => f.fireTime > T0 + MINUTE);
      const none = await after(made.none);
      expect(none.map((f) => [f.fireTime, f.outcome, f.reason])).to.deep.equal(missed.map((t) => [t, 'skipped', 'misfire']));
      const latest = await after(made.latest);
      expect(latest.filter((f) => f.outcome === 'caught_up').map((f) => f.fireTime)).to.deep.equal([missed[9]]);
      expect(latest.filter((f) => f.outcome === 'skipped')).to.have.length(9);
      const all = await after(made.all);
      expect(all.map((f) => [f.fireTime, f.outcome])).to.deep.equal(missed.map((t) => [t, 'caught_up']));
      // The caught-up instances of `all` run one after another: the first is PENDING, the rest wait.
      expect(b.instances.map((e) => e.id)).to.have.members([cronInstanceId(made.latest, missed[9]), cronInstanceId(made.all, missed[0])]);
      for (const t of missed.slice(1)) expect((await b.store.getTask(cronInstanceId(made.all, t)))?.state).to.equal('BLOCKED');
      let ran = 0;
      for (; ran < 10; ran++) {
        const next = b.instances.filter((e) => e.id.startsWith(`cron-${made.all}-`))[ran];
        if (!next) break;
        await runToSuccess(b.store, [next.id], clock.now());
        b.evaluator.instancesEnded([next.id]);
        await settle([b]);
      }
      expect(ran).to.equal(10);
      expect(b.instances.filter((e) => e.id.startsWith(`cron-${made.all}-`)).map((e) => e.id)).to.deep.equal(
        missed.map((t) => cronInstanceId(made.all, t)),
      );
      // Then each goes on at the next minute, on time.
      await runToSuccess(b.store, [cronInstanceId(made.latest, missed[9])], clock.now());
      await advance(clock, 30 * SECOND, [b]);
      for (const id of Object.values(made)) {
        const last = (await firesOf(b.store, id)).pop();
        expect(last).to.include({ fireTime: T0 + 12 * MINUTE, outcome: 'created' });
      }
    });

    it('all is bounded by max_catch_up (the most recent missed ones, oldest first), then the on-time one', async () => {
      const a = await open();
      const cron = await a.crons.create({ name: 'all', cron_expression: '* * * * *', task_type: 'noop', catch_up: 'all', max_catch_up: 3 });
      clock.advance(10 * MINUTE);
      a.evaluator.start();
      await settle([a]);
      const fires = await firesOf(a.store, cron.cron_id as string);
      expect(fires.map((f) => [f.fireTime, f.outcome])).to.deep.equal([
        [T0 + 7 * MINUTE, 'caught_up'],
        [T0 + 8 * MINUTE, 'caught_up'],
        [T0 + 9 * MINUTE, 'caught_up'],
        [T0 + 10 * MINUTE, 'created'], // 500 ms late: within the misfire grace
      ]);
    });
  });

  it('the clock going backwards fires nothing twice; firing resumes when time passes the next fire time', async () => {
    const a = await open();
    const cron = await a.crons.create({ name: 'tick', cron_expression: '* * * * * *', task_type: 'noop' });
    a.evaluator.start();
    await advance(clock, SECOND, [a]); // fires T0+1s
    await runToSuccess(a.store, [a.instances[0].id], clock.now());
    clock.set(T0 - 3600 * SECOND);
    await advance(clock, 5 * SECOND, [a]);
    expect(a.instances).to.have.length(1);
    clock.set(T0 + 2 * SECOND);
    await settle([a]);
    const fires = await firesOf(a.store, cron.cron_id as string);
    expect(fires.map((f) => f.fireTime)).to.deep.equal([T0 + SECOND, T0 + 2 * SECOND]);
  });

  it('a step of the wall clock back, then right again: firing resumes within a second of the correction, not after the step', async () => {
    const a = await open();
    const cron = await a.crons.create({ name: 'tick', cron_expression: '* * * * * *', task_type: 'noop' });
    a.evaluator.start();
    await advance(clock, SECOND, [a]); // fires T0+1s
    await runToSuccess(a.store, [a.instances[0].id], clock.now());
    clock.step(-10 * MINUTE); // a fast clock stepped back by NTP: timers keep their delays (Node's run on the monotonic clock)
    await advance(clock, 3 * SECOND, [a]);
    expect(a.instances, 'nothing due on the wall clock meanwhile').to.have.length(1);
    clock.step(10 * MINUTE); // …and corrected again: T0+4s
    await advance(clock, SECOND, [a]);
    const fires = await firesOf(a.store, cron.cron_id as string);
    expect(fires.map((f) => f.fireTime)).to.include(T0 + 5 * SECOND);
    expect(fires.find((f) => f.fireTime === T0 + 5 * SECOND)).to.include({ outcome: 'created' });
  });

  describe('overlap policies while the previous instance runs', () => {
    async function runningSetup(policy: OverlapPolicy) {
      const a = await open();
      const cron = await a.crons.create({ name: policy, cron_expression: '* * * * * *', task_type: 'noop', overlap_policy: policy });
      const id = cron.cron_id as string;
      a.evaluator.start();
      await advance(clock, SECOND, [a]);
      const first = a.instances[0].id;
      await a.store.claimTasks([first], 'worker-1', clock.now(), 30_000);
      return { a, id, first };
    }
    const succeed = (taskId: string) => ({
      taskId,
      attempt: 1,
      state: 'SUCCEEDED' as const,
      retryAt: null,
      result: null,
      error: null,
      durationMs: 1,
    });

    it('skip: firings while it runs are recorded as skipped (overlap); the next one after it ends is created', async () => {
      const { a, id, first } = await runningSetup('skip');
      await advance(clock, SECOND, [a]);
      await advance(clock, SECOND, [a]);
      await a.store.completeAttempts([succeed(first)], clock.now());
      await advance(clock, SECOND, [a]);
      const fires = await firesOf(a.store, id);
      expect(fires.map((f) => [f.outcome, f.reason])).to.deep.equal([
        ['created', null],
        ['skipped', 'overlap'],
        ['skipped', 'overlap'],
        ['created', null],
      ]);
      expect(a.instances).to.have.length(2);
    });

    it('queue: firings while it runs are created BLOCKED and released one at a time, in order, as each ends', async () => {
      const { a, id, first } = await runningSetup('queue');
      await advance(clock, SECOND, [a]);
      await advance(clock, SECOND, [a]);
      const [, second, third] = [T0 + SECOND, T0 + 2 * SECOND, T0 + 3 * SECOND].map((t) => cronInstanceId(id, t));
      expect((await a.store.getTask(second))?.state).to.equal('BLOCKED');
      expect((await a.store.getTask(third))?.state).to.equal('BLOCKED');
      expect(a.instances.map((e) => e.id)).to.deep.equal([first]);
      await a.store.completeAttempts([succeed(first)], clock.now());
      a.evaluator.instancesEnded([first]);
      await settle([a]);
      expect(a.instances.map((e) => e.id)).to.deep.equal([first, second]);
      expect((await a.store.getTask(second))?.state).to.equal('PENDING');
      expect((await a.store.getTask(third))?.state).to.equal('BLOCKED');
      await a.store.claimTasks([second], 'worker-1', clock.now(), 30_000);
      await a.store.completeAttempts([succeed(second)], clock.now());
      a.evaluator.instancesEnded([second]);
      await settle([a]);
      expect((await a.store.getTask(third))?.state).to.equal('PENDING');
      const fires = await firesOf(a.store, id);
      expect(fires.map((f) => f.outcome)).to.deep.equal(['created', 'created', 'created']);
    });

    it('cancel_running: the running instance is asked to cancel (its abort is sent); the new one starts once it has ended', async () => {
      const { a, id, first } = await runningSetup('cancel_running');
      await advance(clock, SECOND, [a]);
      expect(a.aborts).to.deep.equal([{ taskId: first, attempt: 1 }]);
      expect((await a.store.getTask(first))?.cancelRequested).to.equal(true);
      const second = cronInstanceId(id, T0 + 2 * SECOND);
      expect((await a.store.getTask(second))?.state).to.equal('BLOCKED');
      expect(a.instances.map((e) => e.id)).to.deep.equal([first]);
      await a.store.completeAttempts([{ ...succeed(first), state: 'CANCELLED' as const }], clock.now());
      a.evaluator.instancesEnded([first]);
      await settle([a]);
      expect(a.instances.map((e) => e.id)).to.deep.equal([first, second]);
      expect((await a.store.getTask(second))?.state).to.equal('PENDING');
    });
  });

  describe('edits', () => {
    it('pause stops firing; resume fires from now on without catching up the paused period', async () => {
      const a = await open();
      const cron = await a.crons.create({ name: 'tick', cron_expression: '* * * * * *', task_type: 'noop', catch_up: 'all' });
      const id = cron.cron_id as string;
      a.evaluator.start();
      await advance(clock, SECOND, [a]);
      await runToSuccess(a.store, [a.instances[0].id], clock.now());
      await a.crons.update(id, { enabled: false });
      await advance(clock, 10 * SECOND, [a]);
      expect(a.instances).to.have.length(1);
      const resumed = await a.crons.update(id, { enabled: true });
      expect(resumed.next_fire_time).to.equal(new Date(T0 + 12 * SECOND).toISOString());
      await advance(clock, SECOND, [a]);
      expect((await firesOf(a.store, id)).map((f) => f.fireTime)).to.deep.equal([T0 + SECOND, T0 + 12 * SECOND]);
    });

    it('a new expression takes effect at once; a deleted cron never fires again', async () => {
      const a = await open();
      const cron = await a.crons.create({ name: 'm', cron_expression: '0 * * * *', task_type: 'noop' });
      const id = cron.cron_id as string;
      a.evaluator.start();
      await a.crons.update(id, { cron_expression: '*/10 * * * * *' });
      await advance(clock, 10 * SECOND, [a]);
      expect(a.instances.map((e) => e.id)).to.deep.equal([cronInstanceId(id, T0 + 10 * SECOND)]);
      await a.crons.delete(id);
      await advance(clock, 60 * SECOND, [a]);
      expect(a.instances).to.have.length(1);
      expect(a.evaluator.windowSize).to.equal(0);
    });

    it('a payload edit between planning and firing is not lost: the stale firing fails its compare-and-set and re-plans', async () => {
      const a = await open();
      const b = await open();
      const cron = await a.crons.create({ name: 'p', cron_expression: '* * * * * *', task_type: 'echo', payload: { v: 1 } });
      const id = cron.cron_id as string;
      b.evaluator.start();
      await settle([b]);
      await a.crons.update(id, { payload: { v: 2 } }); // b holds version 1 in its window
      await advance(clock, SECOND, [b]);
      expect(b.lost).to.equal(1);
      const task = await b.store.getTask(cronInstanceId(id, T0 + SECOND));
      expect(task?.payload).to.deep.equal({ v: 2 });
    });
  });
});
