import { expect } from 'chai';
import { Periodic } from '../../src/background/periodic';
import { ManualClock } from '../../src/domain/clock';

describe('Periodic (manual clock)', () => {
  it('runs every interval, one run at a time, survives errors, and stops', async () => {
    const clock = new ManualClock();
    let runs = 0;
    const errors: unknown[] = [];
    let release: () => void = () => undefined;
    const p = new Periodic(
      clock,
      1000,
      () => {
        runs++;
        if (runs === 2) return Promise.reject(new Error('boom'));
        return new Promise<void>((r) => (release = r));
      },
      (e) => errors.push(e),
    );
    p.start();
    clock.advance(999);
    expect(runs).to.equal(0);
    clock.advance(1);
    expect(runs).to.equal(1);
    clock.advance(5000); // still running: no second run meanwhile
    expect(runs).to.equal(1);
    release();
    await new Promise((r) => setImmediate(r));
    clock.advance(1000);
    expect(runs).to.equal(2);
    await new Promise((r) => setImmediate(r));
    expect(errors).to.have.length(1);
    clock.advance(1000);
    expect(runs).to.equal(3);
    release();
    await p.stop();
    clock.advance(10_000);
    expect(runs).to.equal(3);
    expect(clock.pendingTimers()).to.equal(0);
  });
});
