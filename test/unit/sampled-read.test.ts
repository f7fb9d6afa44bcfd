import { expect } from 'chai';
import { ManualClock } from '../../src/domain/clock';
import { SampledRead } from '../../src/observability/sampled-read';

describe('SampledRead (duty-cycled metric reads)', () => {
  let clock: ManualClock;
  let reads: number;
  /** A read that takes `tookMs` on the manual clock and answers how many reads ran. */
  const slowRead = (tookMs: number) => async () => {
    reads++;
    clock.advance(tookMs);
    return reads;
  };

  beforeEach(() => {
    clock = new ManualClock(1_000_000);
    reads = 0;
  });

  it('reuses an answer for 10× the time its read took (duty cycle 0.1), then reads again', async () => {
    const s = new SampledRead(slowRead(100), clock);
    expect(await s.get()).to.equal(1);
    clock.advance(999);
    expect(await s.get()).to.equal(1);
    clock.advance(1);
    expect(await s.get()).to.equal(2);
  });

  it('reads every time when reads are instant (exact on small stores)', async () => {
    const s = new SampledRead(slowRead(0), clock);
    expect([await s.get(), await s.get(), await s.get()]).to.deep.equal([1, 2, 3]);
  });

  it('shares one read in flight between concurrent callers', async () => {
    let release: (v: number) => void = () => undefined;
    const s = new SampledRead(() => {
      reads++;
      return new Promise<number>((r) => (release = r));
    }, clock);
    const a = s.get();
    const b = s.get();
    release(7);
    expect([await a, await b]).to.deep.equal([7, 7]);
    expect(reads).to.equal(1);
  });

  it('does not keep a failure, and reads again when the clock went backwards', async () => {
    let fail = true;
    const s = new SampledRead(async () => {
      reads++;
      clock.advance(50);
      if (fail) throw new Error('store down');
      return reads;
    }, clock);
    await s.get().then(
      () => expect.fail('the failure must reach the caller'),
      (err: Error) => expect(err.message).to.equal('store down'),
    );
    fail = false;
    expect(await s.get()).to.equal(2);
    clock.set(clock.now() - 10_000);
    expect(await s.get()).to.equal(3);
  });
});
