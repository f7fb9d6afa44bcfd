import { expect } from 'chai';
import pino from 'pino';
import { Registry } from 'prom-client';
import { Coordination, startCoordination } from '../../src/cluster/redis/coordination';
import { Clock, SystemClock, TimerHandle } from '../../src/domain/clock';
import { NEEDS_REDIS, REDIS_URL, redisClient, testPrefix } from '../helpers/redis';

/** The system clock shifted by `shiftMs` (a node whose clock is wrong). */
class ShiftedClock implements Clock {
  private readonly sys = new SystemClock();
  constructor(private readonly shiftMs: number) {}
  now(): number {
    return this.sys.now() + this.shiftMs;
  }
  monotonic(): number {
    return this.sys.monotonic();
  }
  setTimeout(fn: () => void, delayMs: number): TimerHandle {
    return this.sys.setTimeout(fn, delayMs);
  }
  clearTimeout(h: TimerHandle): void {
    this.sys.clearTimeout(h);
  }
}

if (!REDIS_URL) {
  describe('Redis clock offset', () => {
    it.skip(NEEDS_REDIS, () => undefined);
  });
} else {
  const url = REDIS_URL;
  describe('Redis clock offset (TIME, real server)', () => {
    const started: Coordination[] = [];
    afterEach(async () => {
      await Promise.all(started.splice(0).map((c) => c.close()));
    });

    for (const shiftMs of [0, 90_000, -3_600_000]) {
      it(`a node whose clock is off by ${shiftMs} ms reads the server clock, never ahead of it`, async () => {
        const registry = new Registry();
        const c = await startCoordination({
          url,
          base: new ShiftedClock(shiftMs),
          log: pino({ level: 'silent' }),
          registry,
          prefix: testPrefix(),
        });
        started.push(c);
        expect(c.clock.isSynced).to.equal(true);
        expect(c.clock.correctionMs).to.be.closeTo(-shiftMs, 50); // same machine: the true offset is −shift
        const probe = redisClient();
        try {
          for (let i = 0; i < 20; i++) {
            const read = c.clock.now();
            const [s, us] = await probe.time(); // the server reads its clock after ours was read
            expect(read).to.be.at.most(Number(s) * 1000 + Number(us) / 1000);
          }
        } finally {
          await probe.quit();
        }
        const text = await registry.metrics();
        expect(text).to.match(/scheduler_redis_up 1/);
        expect(text).to.match(/scheduler_redis_clock_round_trip_seconds \d/);
      });
    }
  });
}
