import { expect } from 'chai';
import pino from 'pino';
import { bestSample, estimate, LOCAL_RESOLUTION_MS, MAX_DRIFT, OffsetFilter } from '../../src/cluster/clock-offset';
import { OffsetClock, STEP_THRESHOLD_MS } from '../../src/cluster/offset-clock';
import { ManualClock } from '../../src/domain/clock';

const T0 = 1_700_000_000_000;
const silent = pino({ level: 'silent' });

describe('clock offset (NTP-style, fake samples)', () => {
  it('estimates the offset at the midpoint of the round trip and errs late by half of it', () => {
    // Server is 500 ms ahead; it read its clock 3 ms into a 10 ms round trip.
    const e = estimate({ sentAt: T0, serverAt: T0 + 3 + 500, receivedAt: T0 + 10 });
    expect(e.roundTripMs).to.equal(10);
    expect(e.offsetMs).to.equal(498); // midpoint assumption: 5 ms in
    expect(e.uncertaintyMs).to.equal(5 + LOCAL_RESOLUTION_MS); // half the round trip + 1 ms resolution
    expect(e.correctionMs).to.equal(492); // ≤ the true 500: never early
  });

  it('the correction never exceeds the true offset, wherever the server read its clock', () => {
    const trueOffset = -1234.5;
    for (const rtt of [0, 1, 7, 40, 250]) {
      for (let at = 0; at <= rtt; at += Math.max(1, rtt / 5)) {
        const e = estimate({ sentAt: T0, serverAt: T0 + at + trueOffset, receivedAt: T0 + rtt });
        expect(e.correctionMs).to.be.at.most(trueOffset + 1e-9);
        expect(trueOffset - e.correctionMs).to.be.at.most(rtt + LOCAL_RESOLUTION_MS + 1e-9); // late by ≤ one round trip + 1 ms
      }
    }
  });

  it('keeps the sample with the smallest round trip; ignores samples received before they were sent', () => {
    const slow = { sentAt: T0, serverAt: T0 + 100, receivedAt: T0 + 40 };
    const fast = { sentAt: T0 + 100, serverAt: T0 + 201, receivedAt: T0 + 102 };
    const broken = { sentAt: T0 + 300, serverAt: T0, receivedAt: T0 + 200 };
    expect(bestSample([slow, fast, broken])).to.equal(fast);
    expect(bestSample([broken])).to.equal(null);
    expect(() => estimate(broken)).to.throw(RangeError);
  });

  it('an old fast sample loses to a fresh one once its drift allowance outgrows the difference', () => {
    const old = { sentAt: T0, serverAt: T0 + 1, receivedAt: T0 + 2 }; // uncertainty 1 ms
    const fresh = { sentAt: T0 + 600_000, serverAt: T0 + 600_002, receivedAt: T0 + 600_004 }; // 2 ms
    // 10 min later the old sample's allowance is 600 s × 15 ppm = 9 ms: the fresh one wins.
    expect(bestSample([old, fresh], T0 + 600_004)).to.equal(fresh);
    expect(estimate(old, T0 + 600_004).uncertaintyMs).to.be.closeTo(1 + LOCAL_RESOLUTION_MS + 600_002 * MAX_DRIFT, 1e-9);
  });

  it('OffsetFilter keeps a window of samples: a slow round trip never replaces a fast one inside it', () => {
    const f = new OffsetFilter(3);
    expect(f.current()).to.equal(null);
    f.add({ sentAt: T0, serverAt: T0 + 1001, receivedAt: T0 + 2 }); // rtt 2
    const e = f.add({ sentAt: T0 + 10, serverAt: T0 + 1100, receivedAt: T0 + 90 }); // rtt 80
    expect(e?.roundTripMs).to.equal(2);
    f.add({ sentAt: T0 + 20, serverAt: T0 + 1100, receivedAt: T0 + 100 });
    f.add({ sentAt: T0 + 30, serverAt: T0 + 1100, receivedAt: T0 + 110 }); // the rtt-2 sample leaves the window
    expect(f.current()?.roundTripMs).to.equal(80);
    expect(() => new OffsetFilter(0)).to.throw(RangeError);
  });
});

describe('OffsetClock (manual local clock, fake server)', () => {
  it('reads local time before the first sample, then local + correction; timers stay local', async () => {
    const local = new ManualClock(T0);
    const server = T0 + 5000; // the server is 5 s ahead
    const clock = new OffsetClock(
      local,
      async () => {
        local.advance(4); // a 4 ms round trip; the server reads its clock at the end
        return server + 4;
      },
      silent,
      undefined,
      { samplesPerRound: 1 },
    );
    expect(clock.now()).to.equal(T0);
    await clock.measure();
    expect(clock.isSynced).to.equal(true);
    // True server time now is T0 + 4 + 5000; the clock reads at most that.
    expect(clock.now()).to.be.at.most(T0 + 4 + 5000);
    expect(clock.now()).to.be.at.least(T0 + 4 + 5000 - 4 - LOCAL_RESOLUTION_MS);
    let fired = false;
    clock.setTimeout(() => (fired = true), 100);
    local.advance(100);
    expect(fired).to.equal(true);
  });

  it('keeps the last correction when Redis fails, and re-measures on its interval', async () => {
    const local = new ManualClock(T0);
    let calls = 0;
    let fail = false;
    const clock = new OffsetClock(
      local,
      async () => {
        calls++;
        if (fail) throw new Error('down');
        return local.now() + 1000;
      },
      silent,
      undefined,
      { samplesPerRound: 2, intervalMs: 30_000 },
    );
    await clock.measure();
    expect(calls).to.equal(2);
    const before = clock.correctionMs;
    expect(before).to.be.closeTo(1000 - LOCAL_RESOLUTION_MS, 1e-6);
    fail = true;
    clock.start();
    local.advance(30_000); // the timer fires a measurement
    await new Promise((r) => setImmediate(r));
    expect(calls).to.equal(3); // the first failure ends the round
    // The same sample still rules, with 30 s more drift allowance.
    expect(clock.correctionMs).to.be.closeTo(before - 30_000 * MAX_DRIFT, 1e-6);
    clock.stop();
    expect(local.pendingTimers()).to.equal(0);
  });

  describe('a new sample with a slower round trip (a lower correction)', () => {
    // The server is 1000 ms ahead and reads its clock as the request arrives (the start of the
    // round trip): the correction is 1000 − rtt − 1 ms, so a slower sample lowers it.
    const setUp = () => {
      const local = new ManualClock(T0);
      const rtt = { ms: 2 };
      const clock = new OffsetClock(
        local,
        async () => {
          const at = local.now();
          local.advance(rtt.ms);
          return at + 1000;
        },
        silent,
        undefined,
        { samplesPerRound: 1, window: 1 },
      );
      return { local, rtt, clock };
    };
    /** Readings at every local ms for `n` ms. */
    const readings = (local: ManualClock, clock: OffsetClock, n: number) => {
      const seen: number[] = [];
      for (let i = 0; i < n; i++, local.advance(1)) seen.push(clock.now());
      return seen;
    };
    const nonDecreasing = (xs: number[]) => xs.every((x, i) => i === 0 || x >= xs[i - 1]);

    it(`lower by up to ${STEP_THRESHOLD_MS} ms: the clock stands still until it has caught up, never back`, async () => {
      const { local, rtt, clock } = setUp();
      await clock.measure();
      expect(clock.correctionMs).to.equal(997);
      const seenBefore = readings(local, clock, 10);
      rtt.ms = 100; // correction 899: 98 ms lower
      await clock.measure();
      expect(clock.correctionMs).to.equal(899);
      const seen = readings(local, clock, 200);
      expect(seen[0]).to.be.at.least(seenBefore[9]);
      expect(seen[0] - (local.now() - 200)).to.be.closeTo(997, 1); // held at the old correction's reading
      expect(nonDecreasing([...seenBefore, ...seen])).to.equal(true);
      expect(clock.now() - local.now()).to.be.closeTo(899, 1); // caught up: the new correction rules
    });

    it(`lower by more than ${STEP_THRESHOLD_MS} ms (the server changed): stepped back at once`, async () => {
      const { local, rtt, clock } = setUp();
      await clock.measure();
      rtt.ms = 300; // correction 699: 298 ms lower
      await clock.measure();
      expect(clock.now() - local.now()).to.be.closeTo(699, 1);
    });

    it('a local clock that steps back ends the hold: the reading goes back with it', async () => {
      const { local, rtt, clock } = setUp();
      await clock.measure();
      rtt.ms = 100;
      await clock.measure();
      const held = clock.now();
      expect(held - local.now()).to.be.closeTo(997, 1);
      local.set(local.now() - 50);
      expect(clock.now() - local.now()).to.be.closeTo(899, 1);
      expect(clock.now()).to.be.below(held);
    });
  });

  it('intervalMs Infinity: measured once, never again however far the local clock moves', async () => {
    const local = new ManualClock(T0);
    let calls = 0;
    const clock = new OffsetClock(
      local,
      async () => {
        calls++;
        return T0 + 1000; // a server whose time does not follow the manual clock (real time, in a test)
      },
      silent,
      undefined,
      { samplesPerRound: 1, intervalMs: Infinity },
    );
    await clock.measure();
    clock.start();
    expect(local.pendingTimers()).to.equal(0);
    const before = clock.now();
    local.advance(120_000);
    await new Promise((r) => setImmediate(r));
    expect(calls).to.equal(1);
    // The local clock's 120 s are all in the reading: a re-measure would have taken them back.
    expect(clock.now() - before).to.be.closeTo(120_000, 2);
    clock.stop();
  });

  it('widens the error margin with the age of the sample (never early under drift)', async () => {
    const local = new ManualClock(T0);
    const clock = new OffsetClock(local, async () => local.now(), silent, undefined, { samplesPerRound: 1 });
    await clock.measure();
    local.advance(100_000);
    expect(clock.now()).to.equal(Math.floor(T0 + 100_000 - LOCAL_RESOLUTION_MS - 100_000 * MAX_DRIFT)); // whole ms, rounded down
  });
});
