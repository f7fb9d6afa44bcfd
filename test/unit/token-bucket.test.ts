import { expect } from 'chai';
import { TokenBucket } from '../../src/domain/token-bucket';

const T0 = 1_700_000_000_000;

describe('TokenBucket', () => {
  it('starts full: burst starts at once, then one per 1/rate seconds', () => {
    const b = new TokenBucket(10, 3, T0);
    expect([b.tryTake(T0), b.tryTake(T0), b.tryTake(T0), b.tryTake(T0)]).to.deep.equal([true, true, true, false]);
    expect(b.nextTokenAt(T0)).to.equal(T0 + 100);
    expect(b.tryTake(T0 + 99)).to.equal(false);
    expect(b.tryTake(T0 + 100)).to.equal(true);
  });

  it('never exceeds rate × window + burst in any window (simulated 10 s at 1 ms steps)', () => {
    const b = new TokenBucket(100, 5, T0);
    const starts: number[] = [];
    for (let t = T0; t < T0 + 10_000; t++) while (b.tryTake(t)) starts.push(t);
    for (let i = 0; i < starts.length; i++) {
      const inWindow = starts.filter((s) => s >= starts[i] && s < starts[i] + 1000).length;
      expect(inWindow).to.be.at.most(105);
    }
    expect(starts.length).to.be.within(1000, 1005);
  });

  it('a clock going back adds nothing, and the refill counts from the new reading (a step back of an hour holds nothing for an hour)', () => {
    const b = new TokenBucket(1, 1, T0);
    expect(b.tryTake(T0)).to.equal(true);
    expect(b.tryTake(T0 - 3_600_000)).to.equal(false);
    expect(b.nextTokenAt(T0 - 3_600_000)).to.equal(T0 - 3_600_000 + 1000);
    expect(b.tryTake(T0 - 3_600_000 + 999)).to.equal(false);
    expect(b.tryTake(T0 - 3_600_000 + 1000)).to.equal(true);
  });

  it('refund gives back a token taken for a start that did not happen, never above the burst', () => {
    const b = new TokenBucket(1, 2, T0);
    expect([b.tryTake(T0), b.tryTake(T0), b.tryTake(T0)]).to.deep.equal([true, true, false]);
    b.refund(T0);
    expect(b.tryTake(T0)).to.equal(true);
    b.refund(T0, 5);
    expect([b.tryTake(T0), b.tryTake(T0), b.tryTake(T0)]).to.deep.equal([true, true, false]);
  });

  it('rejects a rate ≤ 0 and a burst < 1', () => {
    expect(() => new TokenBucket(0, 1, T0)).to.throw(RangeError);
    expect(() => new TokenBucket(1, 0.5, T0)).to.throw(RangeError);
  });
});
