import { expect } from 'chai';
import { ManualClock } from '../../src/domain/clock';

describe('ManualClock', () => {
  const T0 = Date.UTC(2026, 0, 1);

  it('starts at the given time (default 2026-01-01T00:00:00Z)', () => {
    expect(new ManualClock().now()).to.equal(T0);
    expect(new ManualClock(1234).now()).to.equal(1234);
  });

  it('fires nothing until advanced, then fires due timers in due order', () => {
    const clock = new ManualClock(0);
    const fired: string[] = [];
    clock.setTimeout(() => fired.push('c@300'), 300);
    clock.setTimeout(() => fired.push('a@100'), 100);
    clock.setTimeout(() => fired.push('b@200'), 200);
    expect(fired).to.deep.equal([]);

    clock.advance(99);
    expect(fired).to.deep.equal([]);

    clock.advance(1);
    expect(fired).to.deep.equal(['a@100']);

    clock.advance(1000);
    expect(fired).to.deep.equal(['a@100', 'b@200', 'c@300']);
    expect(clock.now()).to.equal(1100);
  });

  it('fires timers due at the same instant in creation order', () => {
    const clock = new ManualClock(0);
    const fired: number[] = [];
    for (let i = 0; i < 5; i++) clock.setTimeout(() => fired.push(i), 50);
    clock.advance(50);
    expect(fired).to.deep.equal([0, 1, 2, 3, 4]);
  });

  it('set() to a later time fires due timers; now() inside a callback is the timer due time', () => {
    const clock = new ManualClock(1000);
    const seen: number[] = [];
    clock.setTimeout(() => seen.push(clock.now()), 10);
    clock.setTimeout(() => seen.push(clock.now()), 20);
    clock.set(5000);
    expect(seen).to.deep.equal([1010, 1020]);
    expect(clock.now()).to.equal(5000);
  });

  it('treats a negative delay as 0 (fires on the next advance, even advance(0))', () => {
    const clock = new ManualClock(0);
    let fired = false;
    clock.setTimeout(() => (fired = true), -50);
    clock.advance(0);
    expect(fired).to.equal(true);
  });

  it('fires timers scheduled by a callback when they fall inside the same advance', () => {
    const clock = new ManualClock(0);
    const fired: string[] = [];
    clock.setTimeout(() => {
      fired.push('outer@10');
      clock.setTimeout(() => fired.push('inner@15'), 5);
      clock.setTimeout(() => fired.push('late@60'), 50);
    }, 10);
    clock.advance(20);
    expect(fired).to.deep.equal(['outer@10', 'inner@15']);
    clock.advance(40);
    expect(fired).to.deep.equal(['outer@10', 'inner@15', 'late@60']);
  });

  it('clearTimeout cancels a pending timer; unknown and already-fired handles are ignored', () => {
    const clock = new ManualClock(0);
    const fired: string[] = [];
    const a = clock.setTimeout(() => fired.push('a'), 10);
    const b = clock.setTimeout(() => fired.push('b'), 20);
    clock.clearTimeout(b);
    expect(clock.pendingTimers()).to.equal(1);

    clock.advance(100);
    expect(fired).to.deep.equal(['a']);

    expect(() => clock.clearTimeout(a)).not.to.throw();
    expect(() => clock.clearTimeout({})).not.to.throw();
    expect(clock.pendingTimers()).to.equal(0);
  });

  it('a callback may clear a later timer due in the same advance', () => {
    const clock = new ManualClock(0);
    const fired: string[] = [];
    const handles: { later?: object } = {};
    clock.setTimeout(() => {
      fired.push('first');
      if (handles.later) clock.clearTimeout(handles.later);
    }, 10);
    handles.later = clock.setTimeout(() => fired.push('later'), 20);
    clock.advance(30);
    expect(fired).to.deep.equal(['first']);
    expect(clock.pendingTimers()).to.equal(0);
  });

  it('setting the time backwards fires nothing, and timers still fire later at their absolute time', () => {
    const clock = new ManualClock(10_000);
    const fired: number[] = [];
    clock.setTimeout(() => fired.push(clock.now()), 500); // due at 10_500

    clock.set(5_000); // clock stepped back
    expect(clock.now()).to.equal(5_000);
    expect(fired).to.deep.equal([]);
    expect(clock.pendingTimers()).to.equal(1);

    clock.set(10_499);
    expect(fired).to.deep.equal([]);

    clock.set(10_500);
    expect(fired).to.deep.equal([10_500]);
    expect(clock.pendingTimers()).to.equal(0);
  });

  it('a timer set after a backwards step is due relative to the new (earlier) now', () => {
    const clock = new ManualClock(10_000);
    const fired: string[] = [];
    clock.setTimeout(() => fired.push('old@10100'), 100);
    clock.set(9_000);
    clock.setTimeout(() => fired.push('new@9050'), 50);
    clock.advance(50);
    expect(fired).to.deep.equal(['new@9050']);
    clock.set(10_100);
    expect(fired).to.deep.equal(['new@9050', 'old@10100']);
  });

  it('pendingTimers() counts timers not yet fired or cleared', () => {
    const clock = new ManualClock(0);
    expect(clock.pendingTimers()).to.equal(0);
    clock.setTimeout(() => undefined, 10);
    const h = clock.setTimeout(() => undefined, 20);
    clock.setTimeout(() => undefined, 30);
    expect(clock.pendingTimers()).to.equal(3);
    clock.advance(10);
    expect(clock.pendingTimers()).to.equal(2);
    clock.clearTimeout(h);
    expect(clock.pendingTimers()).to.equal(1);
    clock.advance(20);
    expect(clock.pendingTimers()).to.equal(0);
  });
});
