import { expect } from 'chai';
import { AttemptLogAppend, AttemptLogWindow, logLine, MAX_LINE_CHARS, MAX_LOG_BYTES, MAX_LOG_LINES } from '../../src/domain/attempt-log';
import { LogShipper } from '../../src/actors/worker/attempt-reports';
import { TaskRunner } from '../../src/actors/worker/task-runner';
import { WorkResult } from '../../src/actors/protocol';
import { ManualClock } from '../../src/domain/clock';
import { TaskHandler } from '../../src/handlers/types';

const flush = () => new Promise((r) => setImmediate(r));

/** `ctx.log` lines kept per attempt: the bounds (domain/attempt-log.ts) and the worker's shipping. */
describe('attempt logs', () => {
  it('a line keeps message and fields as JSON; an oversized or non-JSON part is cut and marked', () => {
    expect(logLine(1, 5, 'hello', { k: 1 })).to.deep.equal({ n: 1, at: 5, message: 'hello', fields: '{"k":1}', truncated: false });
    expect(logLine(2, 5, 'x'.repeat(MAX_LINE_CHARS + 1)).message).to.have.length(MAX_LINE_CHARS);
    expect(logLine(2, 5, 'x'.repeat(MAX_LINE_CHARS + 1)).truncated).to.equal(true);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(logLine(3, 5, 'm', cyclic)).to.include({ fields: null, truncated: true });
    expect(logLine(4, 5, 'm', { big: 'y'.repeat(MAX_LINE_CHARS) })).to.include({ fields: null, truncated: true });
    expect(logLine(5, 5, 42 as unknown as string)).to.include({ message: '42' });
  });

  it('a NUL and a lone surrogate in a message are one U+FFFD each (the stores keep UTF-8); a pair stays', () => {
    expect(logLine(1, 0, 'a\u0000b\ud800c\udc00d\ud83d\ude00').message).to.equal('a\ufffdb\ufffdc\ufffdd\ud83d\ude00');
  });

  it(`a window keeps the last ${MAX_LOG_LINES} lines and hands out only new ones`, () => {
    const w = new AttemptLogWindow();
    w.add(1, 'a');
    expect(w.takeNew()).to.deep.equal({ lines: [logLine(1, 1, 'a')], keepFrom: 1 });
    expect(w.hasNew).to.equal(false);
    for (let i = 2; i <= MAX_LOG_LINES + 10; i++) w.add(i, `m${i}`);
    const sent = w.takeNew();
    expect(sent.keepFrom).to.equal(11);
    expect(sent.lines.map((l) => l.n)).to.deep.equal(Array.from({ length: MAX_LOG_LINES }, (_, i) => i + 11));
  });

  it(`a window keeps at most ${MAX_LOG_BYTES} characters (at least the newest line)`, () => {
    const w = new AttemptLogWindow();
    const line = 'z'.repeat(4000);
    for (let i = 0; i < 40; i++) w.add(i, line);
    const sent = w.takeNew();
    const kept = Math.floor(MAX_LOG_BYTES / 4000);
    expect(sent.lines).to.have.length(kept);
    expect(sent.keepFrom).to.equal(41 - kept);
  });

  it('the shipper sends at most once per interval, and an ended attempt at once', () => {
    const clock = new ManualClock();
    const sent: AttemptLogAppend[][] = [];
    const shipper = new LogShipper(clock, 1000, (b) => sent.push(b));
    shipper.log('t1', 1, 'one');
    shipper.log('t2', 4, 'two', { a: 1 });
    expect(sent).to.deep.equal([]);
    clock.advance(0);
    expect(sent).to.have.length(1);
    expect(sent[0].map((b) => [b.taskId, b.attempt, b.lines.map((l) => l.message)])).to.deep.equal([
      ['t1', 1, ['one']],
      ['t2', 4, ['two']],
    ]);
    shipper.log('t1', 1, 'three');
    clock.advance(999);
    expect(sent).to.have.length(1);
    shipper.log('t2', 4, 'four');
    shipper.ended('t2', 4);
    expect(sent[1]).to.deep.equal([{ taskId: 't2', attempt: 4, lines: [logLine(2, clock.now(), 'four')], keepFrom: 1 }]);
    clock.advance(1);
    expect(sent[2].map((b) => b.lines.map((l) => [l.n, l.message]))).to.deep.equal([[[2, 'three']]]);
  });

  it("the runner ships an attempt's ctx.log lines before its completion, and none after it ended", async () => {
    const clock = new ManualClock();
    const order: string[] = [];
    const logs: AttemptLogAppend[][] = [];
    let late: (() => void) | null = null;
    const handler: TaskHandler = (_p, ctx) => {
      ctx.log('starting', { step: 1 });
      ctx.log('done');
      late = () => ctx.log('after the end');
      return 'ok';
    };
    const runner = new TaskRunner(new Map([['h', handler]]), (r: WorkResult[]) => order.push(`completed ${r.length}`), clock, {
      logs: (b) => {
        logs.push(b);
        order.push('logs');
      },
    });
    runner.run([{ id: 't1', attempt: 2, taskType: 'h', payload: null, timeoutMs: 1000, idempotencyKey: null }]);
    await flush();
    await flush();
    expect(order).to.deep.equal(['logs', 'completed 1']);
    expect(logs[0][0]).to.deep.include({ taskId: 't1', attempt: 2, keepFrom: 1 });
    expect(logs[0][0].lines.map((l) => [l.n, l.message, l.fields])).to.deep.equal([
      [1, 'starting', '{"step":1}'],
      [2, 'done', null],
    ]);
    (late as unknown as () => void)();
    clock.advance(5000);
    expect(logs).to.have.length(1);
  });
});
