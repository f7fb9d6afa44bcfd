import { expect } from 'chai';
import { ManualClock } from '../../src/domain/clock';
import { StallWatch } from '../../src/domain/stall-watch';

describe('StallWatch (a lease check that learns its own process was stalled)', () => {
  it('a check on time, or late by at most half a lease, sees no stall and holds nothing', () => {
    const clock = new ManualClock();
    const watch = new StallWatch(clock, 1000);
    watch.armed(500);
    clock.stall(1000); // due at 500, runs at 1,000: 500 ms late
    expect(watch.lateness()).to.equal(0);
    expect(watch.holding()).to.equal(false);
  });

  it('a step of the wall clock forward holds the leases as a stall does, and the warning calls it a step', () => {
    const clock = new ManualClock();
    const watch = new StallWatch(clock, 1000);
    watch.armed(500);
    clock.advance(500);
    clock.step(3_600_000);
    expect(watch.lateness()).to.equal(3_600_000);
    expect(watch.steppedMs()).to.equal(3_600_000);
    expect(watch.holding()).to.equal(true);
    expect(watch.warning('attempt')).to.equal(
      'the wall clock stepped forward by about 3600 s (not a stall of this process): attempt leases are judged again one lease from now',
    );
    watch.armed(500);
    clock.stall(2000); // a real stall: both clocks moved
    expect(watch.lateness()).to.equal(1500);
    expect(watch.steppedMs()).to.equal(0);
    expect(watch.warning('attempt')).to.equal('this process was stalled: attempt leases are judged again one lease from now');
  });

  it('a check more than half a lease late is a stall: leases are held for one lease from then', () => {
    const clock = new ManualClock();
    const watch = new StallWatch(clock, 1000);
    watch.armed(500);
    clock.stall(2000);
    expect(watch.lateness()).to.equal(1500);
    expect(watch.holding()).to.equal(true);
    watch.armed(500);
    clock.stall(500); // the next check, on time, 500 ms after the stall was seen
    expect(watch.lateness()).to.equal(0);
    expect(watch.holding()).to.equal(true);
    watch.armed(500);
    clock.stall(500); // one lease after it
    expect(watch.lateness()).to.equal(0);
    expect(watch.holding()).to.equal(false);
  });

  it('holdFromNow (a start): leases are held for one lease from now, then judged again', () => {
    const clock = new ManualClock();
    const watch = new StallWatch(clock, 1000);
    watch.holdFromNow();
    expect(watch.holding()).to.equal(true);
    clock.stall(999);
    expect(watch.holding()).to.equal(true);
    clock.stall(1);
    expect(watch.holding()).to.equal(false);
  });

  it('a clock set backwards is no stall', () => {
    const clock = new ManualClock();
    const watch = new StallWatch(clock, 1000);
    watch.armed(500);
    clock.set(clock.now() - 60_000);
    expect(watch.lateness()).to.equal(0);
    expect(watch.holding()).to.equal(false);
  });
});
