import { expect } from 'chai';
import { ManualClock } from '../../src/domain/clock';
import { StoreUnavailableError } from '../../src/domain/errors';
import { PASS_FAILURE_REPEAT_LOG_MS, passFailureLog } from '../../src/background/pass-failures';

describe('background pass failures in the log', () => {
  function recorder() {
    const lines: Array<{ obj: Record<string, unknown>; msg: string }> = [];
    return { lines, log: { warn: (obj: Record<string, unknown>, msg: string) => lines.push({ obj, msg }) } as never };
  }

  it('a failure every second: the first logged, then one line a minute with the count', () => {
    const clock = new ManualClock(1_000_000);
    const { lines, log } = recorder();
    const f = passFailureLog(log, clock, 'WAL checkpoint failed');
    for (let s = 0; s < 150; s++) {
      f.onError(new Error('Worker initialization failure: EMFILE'));
      clock.advance(1_000);
    }
    expect(lines.map((l) => l.msg)).to.deep.equal([
      'WAL checkpoint failed',
      'WAL checkpoint failed (again 60 time(s) since the last line)',
      'WAL checkpoint failed (again 60 time(s) since the last line)',
    ]);
    expect(lines[1].obj.repeats).to.equal(60);
  });

  it('a success starts over; a store fault is not logged here (its health logs it once)', () => {
    const clock = new ManualClock(1_000_000);
    const { lines, log } = recorder();
    const f = passFailureLog(log, clock, 'audit pass failed');
    f.onError(new Error('a'));
    f.succeeded();
    clock.advance(1_000);
    f.onError(new Error('b'));
    f.onError(new StoreUnavailableError('disk_full', '/data/scheduler.db', 'no space left', true));
    clock.advance(PASS_FAILURE_REPEAT_LOG_MS - 2_000);
    f.onError(new Error('c'));
    expect(lines.map((l) => (l.obj.err as Error).message)).to.deep.equal(['a', 'b']);
  });

  it('a clock that goes backwards logs the repeat at once rather than never', () => {
    const clock = new ManualClock(1_000_000);
    const { lines, log } = recorder();
    const f = passFailureLog(log, clock, 'overflow release pass failed');
    f.onError(new Error('a'));
    clock.set(500_000);
    f.onError(new Error('b'));
    expect(lines).to.have.length(2);
  });
});
