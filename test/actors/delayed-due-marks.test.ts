import { expect } from 'chai';
import { DelayedDueMarks } from '../../src/actors/owner/delayed-due-marks';
import { ManualClock } from '../../src/domain/clock';

const T0 = Date.UTC(2026, 5, 1, 12, 0, 0);

describe('DelayedDueMarks', () => {
  let clock: ManualClock;
  let written: Array<[string[], number]>;
  let held: Set<string>;
  let marks: DelayedDueMarks;

  function make(delayMs: number): void {
    marks = new DelayedDueMarks(
      clock,
      delayMs,
      (ids, now) => written.push([ids, now]),
      (id) => held.has(id),
    );
  }

  beforeEach(() => {
    clock = new ManualClock(T0);
    written = [];
    held = new Set(['a', 'b', 'c', 'd']);
  });
  afterEach(() => {
    marks.stop();
    expect(clock.pendingTimers(), 'timers left behind').to.equal(0);
  });

  it('writes a mark between one and two delays after its hand-out, with the hand-out clock reading', () => {
    make(1000);
    marks.add(['a'], T0);
    clock.advance(999);
    expect(written).to.deep.equal([]);
    clock.advance(1); // first sweep: a ages
    expect(written).to.deep.equal([]);
    clock.advance(500);
    marks.add(['b'], T0 + 1500);
    clock.advance(500); // second sweep: a is written, b ages
    expect(written).to.deep.equal([[['a'], T0]]);
    clock.advance(1000);
    expect(written).to.deep.equal([
      [['a'], T0],
      [['b'], T0 + 1500],
    ]);
    expect(clock.pendingTimers()).to.equal(0); // nothing waits: no timer
  });

  it('writes only the tasks still held; a batch with none left writes nothing', () => {
    make(100);
    marks.add(['a', 'b'], T0);
    marks.add(['c'], T0);
    held.delete('a');
    held.delete('c');
    clock.advance(200);
    expect(written).to.deep.equal([[['b'], T0]]);
  });

  it('timers count only the delay, whatever the clock reads; each mark keeps its hand-out reading', () => {
    const delays: number[] = [];
    let reading = T0;
    const fake = {
      now: () => reading,
      monotonic: () => clock.monotonic(),
      setTimeout: (fn: () => void, ms: number) => (delays.push(ms), clock.setTimeout(fn, ms)),
      clearTimeout: (h: never) => clock.clearTimeout(h),
    };
    marks = new DelayedDueMarks(
      fake,
      1000,
      (ids, at) => written.push([ids, at]),
      (id) => held.has(id),
    );
    marks.add(['a'], T0);
    reading = T0 + 86_400_000; // the clock jumps a day ahead…
    marks.add(['b'], reading);
    clock.advance(1000);
    reading = T0 - 3_600_000; // …then an hour back
    clock.advance(1000);
    clock.advance(1000);
    expect(delays).to.deep.equal([1000, 1000]); // one sweep ages both, the next writes them: no third
    expect(written).to.deep.equal([
      [['a'], T0],
      [['b'], T0 + 86_400_000],
    ]);
  });

  it('with a manual clock stepping back: nothing is written early, and the hand-out readings are kept', () => {
    make(1000);
    marks.add(['a'], T0);
    clock.set(T0 - 3_600_000); // an hour back: fires nothing, and the hand-out reading is kept
    marks.add(['b'], T0 - 3_600_000);
    clock.set(T0 + 1000); // the first sweep's time comes again
    clock.set(T0 + 2000);
    expect(written).to.deep.equal([
      [['a'], T0],
      [['b'], T0 - 3_600_000],
    ]);
  });

  it('delay 0 writes at once, without a timer; empty hand-outs are ignored', () => {
    make(0);
    marks.add([], T0);
    marks.add(['a'], T0);
    expect(written).to.deep.equal([[['a'], T0]]);
    expect(clock.pendingTimers()).to.equal(0);
  });

  it('stop drops what waits and its timer, and later hand-outs arm nothing', () => {
    make(1000);
    marks.add(['a'], T0);
    expect(marks.waiting).to.equal(1);
    marks.stop();
    marks.add(['b'], T0);
    expect(clock.pendingTimers()).to.equal(0);
    clock.advance(5000);
    expect(written).to.deep.equal([]);
    expect(marks.waiting).to.equal(0);
  });
});
