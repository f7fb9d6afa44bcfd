/**
 * ReleaseTimer (src/actors/dispatcher/release-timer.ts): the dispatcher's one wake at the earliest
 * instant asked for, on the injected clock.
 */
import { expect } from 'chai';
import { ReleaseTimer } from '../../src/actors/dispatcher/release-timer';
import { ManualClock } from '../../src/domain/clock';

describe('ReleaseTimer', () => {
  let clock: ManualClock;
  let fired: number[];
  let timer: ReleaseTimer;

  beforeEach(() => {
    clock = new ManualClock(1_000_000);
    fired = [];
    timer = new ReleaseTimer(clock, () => fired.push(clock.now()));
  });

  it('fires once at the instant asked for', () => {
    timer.arm(1_000_250);
    clock.advance(249);
    expect(fired).to.deep.equal([]);
    clock.advance(1);
    expect(fired).to.deep.equal([1_000_250]);
    clock.advance(10_000);
    expect(fired).to.have.length(1);
    expect(clock.pendingTimers()).to.equal(0);
  });

  it('keeps the earlier wake: a later instant changes nothing, an earlier one re-arms', () => {
    timer.arm(1_000_500);
    timer.arm(1_000_900);
    expect(clock.pendingTimers()).to.equal(1);
    timer.arm(1_000_100);
    expect(clock.pendingTimers()).to.equal(1);
    clock.advance(1_000);
    expect(fired).to.deep.equal([1_000_100]);
  });

  it('null asks for nothing; an instant already past fires at once on the next tick', () => {
    timer.arm(null);
    expect(clock.pendingTimers()).to.equal(0);
    timer.arm(999_000);
    clock.advance(0);
    expect(fired).to.deep.equal([1_000_000]);
  });

  it('can be armed again from its own callback, and stop cancels', () => {
    const again = new ReleaseTimer(clock, () => {
      fired.push(clock.now());
      if (fired.length === 1) again.arm(clock.now() + 50);
    });
    again.arm(1_000_010);
    clock.advance(100);
    expect(fired).to.deep.equal([1_000_010, 1_000_060]);
    again.arm(1_000_200);
    again.stop();
    clock.advance(1_000);
    expect(fired).to.have.length(2);
    expect(clock.pendingTimers()).to.equal(0);
  });

  it("a wake past Node's timer bound is armed at the bound", () => {
    const bound = 2_147_483_647;
    timer.arm(clock.now() + bound * 2);
    clock.advance(bound - 1);
    expect(fired).to.deep.equal([]);
    clock.advance(1);
    expect(fired).to.have.length(1);
  });

  it('armed after the clock went back, it waits the whole distance from the reading now', () => {
    clock.set(900_000); // an NTP step back
    timer.arm(1_000_300);
    clock.advance(100_299);
    expect(fired).to.deep.equal([]);
    clock.advance(1);
    expect(fired).to.deep.equal([1_000_300]);
  });
});
