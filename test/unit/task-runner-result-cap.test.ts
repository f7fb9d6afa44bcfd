import { expect } from 'chai';
import { DEFAULT_MAX_RESULT_BYTES, TaskRunner } from '../../src/actors/worker/task-runner';
import { WorkItem, WorkResult } from '../../src/actors/protocol';
import { ManualClock } from '../../src/domain/clock';
import { TaskHandler } from '../../src/handlers/types';

/** Lets the handler promise settle and the runner's per-turn report (setImmediate) go out. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
}

function item(id: string, taskType: string): WorkItem {
  return { id, attempt: 1, taskType, payload: null, timeoutMs: 10_000, idempotencyKey: null };
}

/** Arrays nested `depth` levels deep (`[[…[0]…]]`; the outermost array is level 1). */
function nested(depth: number): unknown {
  let v: unknown = 0;
  for (let i = 0; i < depth; i++) v = [v];
  return v;
}

/** `maxResultBytes`: a result whose JSON is larger ends the attempt as a permanent `result_too_large`. */
describe('TaskRunner result size cap', () => {
  let clock: ManualClock;
  let reported: WorkResult[];
  const report = (results: WorkResult[]) => reported.push(...results);

  /** Handlers returning a JSON string of exactly `n` bytes once serialised (the quotes count). */
  const handlers = new Map<string, TaskHandler>([
    ['exact', (_p, ctx) => 'x'.repeat(Number(ctx.taskId.split(':')[1]) - 2)],
    ['multibyte', () => 'é'.repeat(10)], // 20 bytes of UTF-8 + 2 quotes = 22, though 12 characters
    ['nothing', () => undefined],
    ['object', () => ({ ok: true, n: 1 })],
    ['deep', (_p, ctx) => nested(Number(ctx.taskId.split(':')[1]))],
  ]);

  beforeEach(() => {
    clock = new ManualClock();
    reported = [];
  });
  afterEach(() => {
    expect(clock.pendingTimers(), 'timeout timers left behind').to.equal(0);
  });

  async function runOne(runner: TaskRunner, it: WorkItem): Promise<WorkResult> {
    runner.run([it]);
    await settle();
    const r = reported.find((x) => x.id === it.id);
    expect(r, `no report for ${it.id}`).to.not.equal(undefined);
    return r!;
  }

  it('a result exactly at the cap succeeds, one byte more fails permanently naming both sizes', async () => {
    const runner = new TaskRunner(handlers, report, clock, { maxResultBytes: 100 });
    const at = await runOne(runner, item('t:100', 'exact'));
    expect(at.outcome).to.deep.equal({ kind: 'succeeded', result: 'x'.repeat(98) });
    const over = await runOne(runner, item('t:101', 'exact'));
    expect(over.outcome).to.include({ kind: 'failed', errorType: 'result_too_large', permanent: true });
    const message = (over.outcome as { message: string }).message;
    expect(message).to.contain('101').and.to.contain('100');
    expect(runner.running).to.equal(0);
  });

  it('counts UTF-8 bytes of the JSON text, not characters', async () => {
    const runner = new TaskRunner(handlers, report, clock, { maxResultBytes: 21 });
    const r = await runOne(runner, item('mb', 'multibyte'));
    expect(r.outcome).to.include({ kind: 'failed', errorType: 'result_too_large' });
    expect((r.outcome as { message: string }).message)
      .to.contain('22')
      .and.to.contain('21');
    const fits = await runOne(new TaskRunner(handlers, report, clock, { maxResultBytes: 22 }), item('mb2', 'multibyte'));
    expect(fits.outcome).to.deep.equal({ kind: 'succeeded', result: 'é'.repeat(10) });
  });

  it('small results and undefined (stored as null) pass a small cap', async () => {
    const runner = new TaskRunner(handlers, report, clock, { maxResultBytes: 20 });
    expect((await runOne(runner, item('o', 'object'))).outcome).to.deep.equal({ kind: 'succeeded', result: { ok: true, n: 1 } });
    expect((await runOne(runner, item('u', 'nothing'))).outcome).to.deep.equal({ kind: 'succeeded', result: null });
  });

  it('defaults to 1 MiB when no cap is given (existing call sites)', async () => {
    expect(DEFAULT_MAX_RESULT_BYTES).to.equal(1_048_576);
    const runner = new TaskRunner(handlers, report, clock);
    expect((await runOne(runner, item(`d:${DEFAULT_MAX_RESULT_BYTES}`, 'exact'))).outcome).to.include({ kind: 'succeeded' });
    const over = await runOne(runner, item(`d:${DEFAULT_MAX_RESULT_BYTES + 1}`, 'exact'));
    expect(over.outcome).to.include({ kind: 'failed', errorType: 'result_too_large', permanent: true });
  });

  it('a result nested deeper than 64 levels ends the attempt as a permanent result_too_deep (a payload bound); 64 levels pass', async () => {
    const runner = new TaskRunner(handlers, report, clock);
    expect((await runOne(runner, item('deep:64', 'deep'))).outcome).to.deep.equal({ kind: 'succeeded', result: nested(64) });
    for (const depth of [65, 3500]) {
      const r = await runOne(runner, item(`deep:${depth}`, 'deep'));
      expect(r.outcome, `depth ${depth}`).to.include({ kind: 'failed', errorType: 'result_too_deep', permanent: true });
      expect((r.outcome as { message: string }).message).to.contain('64 levels');
    }
    // JSON itself fails first past its own recursion limit.
    expect((await runOne(runner, item('deep:100000', 'deep'))).outcome).to.include({ errorType: 'result_not_serializable' });
  });

  it('a result sure to be too large is refused before it is serialised: a typed array, a graph sharing its levels', async () => {
    const shared = () => {
      let v: unknown = { leaf: 'x' };
      for (let i = 0; i < 40; i++) v = { a: v, b: v }; // 2^40 leaves: stringifying it would not end
      return v;
    };
    const runner = new TaskRunner(
      new Map<string, TaskHandler>([
        ['typed', () => new Float64Array(4 * DEFAULT_MAX_RESULT_BYTES)],
        ['shared', shared],
      ]),
      report,
      clock,
    );
    for (const type of ['typed', 'shared']) {
      const r = await runOne(runner, item(type, type));
      expect(r.outcome, type).to.include({ kind: 'failed', errorType: 'result_too_large', permanent: true });
      expect((r.outcome as { message: string }).message).to.match(
        /^handler result is at least \d+ bytes of JSON, more than the 1048576 bytes allowed/,
      );
    }
  });

  it('the attempt duration is measured on the injected clock', async () => {
    const slow: TaskHandler = async () => {
      clock.advance(250);
      return 'y'.repeat(50);
    };
    const runner = new TaskRunner(new Map([['slow', slow]]), report, clock, { maxResultBytes: 10 });
    const r = await runOne(runner, item('s', 'slow'));
    expect(r.outcome).to.include({ errorType: 'result_too_large' });
    expect(r.durationMs).to.equal(250);
  });
});
