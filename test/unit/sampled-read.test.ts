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

  it('reuses even an instant answer for minAgeMs (on the manual clock), then reads again', async () => {
    const s = new SampledRead(slowRead(0), clock, 0.1, Number.POSITIVE_INFINITY, 1000);
    expect(await s.get()).to.equal(1);
    clock.advance(999);
    expect(await s.get()).to.equal(1);
    clock.advance(1);
    expect(await s.get()).to.equal(2);
  });

  it('with minAgeMs, a slow read is still reused by the duty-cycle rule when that is longer', async () => {
    const s = new SampledRead(slowRead(200), clock, 0.1, Number.POSITIVE_INFINITY, 1000);
    expect(await s.get()).to.equal(1);
    clock.advance(1999);
    expect(await s.get()).to.equal(1);
    clock.advance(1);
    expect(await s.get()).to.equal(2);
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

describe('SampledRead: slow reads are refreshed in the background', () => {
  it('answers with the last value while a read that took ≥ serveStaleAboveMs is repeated', async () => {
    const clock = new ManualClock(1_000_000);
    let reads = 0;
    let release: () => void = () => undefined;
    const s = new SampledRead(
      () => {
        reads++;
        const n = reads;
        if (n === 1) {
          clock.advance(500); // the first read takes 500 ms on the manual clock
          return Promise.resolve(n);
        }
        return new Promise<number>(
          (r) =>
            (release = () => {
              clock.advance(300);
              r(n);
            }),
        );
      },
      clock,
      0.1,
      100,
    );
    expect(await s.get()).to.equal(1);
    clock.advance(5_000); // stale: 10 × 500 ms have passed
    expect(await s.get()).to.equal(1); // the last answer at once; read 2 runs in the background
    expect(await s.get()).to.equal(1); // shares read 2, still not waited for
    expect(reads).to.equal(2);
    release();
    await Promise.resolve();
    await Promise.resolve();
    expect(await s.get()).to.equal(2);
  });

  it('drops a failed background read and starts another at the next call', async () => {
    const clock = new ManualClock(1_000_000);
    let reads = 0;
    const s = new SampledRead(
      async () => {
        reads++;
        clock.advance(200);
        if (reads === 2) throw new Error('store down');
        return reads;
      },
      clock,
      0.5,
      100,
    );
    expect(await s.get()).to.equal(1);
    clock.advance(1_000);
    expect(await s.get()).to.equal(1); // read 2 fails in the background, unseen
    await new Promise((r) => setImmediate(r));
    expect(await s.get()).to.equal(1); // read 3 started, last answer served
    await new Promise((r) => setImmediate(r));
    expect(reads).to.equal(3);
    expect(await s.get()).to.equal(3);
  });
});

describe('SampledRead: the first read is awaited for at most firstWaitMs', () => {
  it('answers null after firstWaitMs on the clock while the first read goes on, then its answer', async () => {
    const clock = new ManualClock(1_000_000);
    let reads = 0;
    let release: (v: number) => void = () => undefined;
    const s = new SampledRead(
      () => {
        reads++;
        return new Promise<number>((r) => (release = r));
      },
      clock,
      0.1,
      100,
      0,
      2000,
    );
    const first = s.get();
    clock.advance(1999);
    const second = s.get(); // shares the read in flight, with its own bound
    clock.advance(1);
    expect(await first).to.equal(null);
    release(42);
    expect(await second).to.equal(42);
    expect(await s.get()).to.equal(42);
    expect(reads).to.equal(1);
  });

  it('answers the first read when it is faster than firstWaitMs, and passes its failure on', async () => {
    const clock = new ManualClock(1_000_000);
    let fail = true;
    const s = new SampledRead(
      async () => {
        if (fail) throw new Error('store down');
        return 7;
      },
      clock,
      0.1,
      100,
      0,
      2000,
    );
    await s.get().then(
      () => expect.fail('the failure must reach the caller'),
      (err: Error) => expect(err.message).to.equal('store down'),
    );
    fail = false;
    expect(await s.get()).to.equal(7);
    clock.advance(5000); // the timers of both calls were cleared: nothing fires
    expect(await s.get()).to.equal(7);
  });
});
