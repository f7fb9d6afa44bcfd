import { expect } from 'chai';
import pino from 'pino';
import { Registry } from 'prom-client';
import { Coordination, startCoordination } from '../../src/cluster/redis/coordination';
import { SystemClock } from '../../src/domain/clock';
import { DispatchLimits } from '../../src/domain/dispatch-limits';
import { NEEDS_REDIS, REDIS_URL, redisClient, testPrefix } from '../helpers/redis';

/**
 * Two nodes (two coordinations, two DispatchLimits) start tasks of one rate-limited type as fast
 * as their buckets allow, the way a dispatcher does: synchronous takes from leased stock, a park
 * until the lease reply (wake) or the ETA of the next token. Together they stay within the limit.
 */
async function runNode(limits: DispatchLimits, clock: { now(): number }, taskType: string, stopAt: () => boolean): Promise<number> {
  let started = 0;
  let wake: (() => void) | null = null;
  limits.onChange(() => wake?.());
  while (!stopAt()) {
    const bucket = limits.typeBucket(taskType)!;
    const now = clock.now();
    if (bucket.nextTokenAt(now) <= now && bucket.tryTake(now)) {
      started++;
      continue;
    }
    const at = bucket.nextTokenAt(now);
    await new Promise<void>((resolve) => {
      const timer = Number.isFinite(at) ? setTimeout(resolve, Math.max(1, at - now)) : setTimeout(resolve, 50); // 50 ms: safety net only
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    wake = null;
  }
  return started;
}

if (!REDIS_URL) {
  describe('Redis rate limits across nodes', () => {
    it.skip(NEEDS_REDIS, () => undefined);
  });
} else {
  const url = REDIS_URL;
  describe('Redis rate limits across nodes (leased batches)', function () {
    this.timeout(20_000);
    const nodes: Coordination[] = [];
    afterEach(async () => {
      await Promise.all(nodes.splice(0).map((n) => n.close()));
    });

    it('two nodes together start at most burst + rate × elapsed + one batch each', async () => {
      const prefix = testPrefix();
      const log = pino({ level: 'silent' });
      const rate = 200;
      const burst = 20;
      const batch = Math.floor((rate * 100) / 1000); // the default lease window: 100 ms of the rate
      for (const id of ['a', 'b'])
        nodes.push(await startCoordination({ url, base: new SystemClock(), log, nodeId: id, prefix, registry: new Registry() }));
      const probe = redisClient();
      const serverMs = async () => {
        const [s, us] = await probe.time();
        return Number(s) * 1000 + Number(us) / 1000;
      };
      try {
        const t0 = await serverMs();
        const limitsOf = nodes.map((n) => {
          const l = new DispatchLimits(n.rateLimiter);
          l.setTypeLimit('send_email', { ratePerSecond: rate, burst }, n.clock.now());
          return l;
        });
        // Each node runs until its clock (the server's, errs late) reads t0 + 500 ms.
        const counts = await Promise.all(
          limitsOf.map((l, i) => runNode(l, nodes[i].clock, 'send_email', () => nodes[i].clock.now() >= t0 + 500)),
        );
        const elapsed = (await serverMs()) - t0;
        const total = counts[0] + counts[1];
        expect(total).to.be.at.most(burst + Math.ceil((rate * elapsed) / 1000) + 2 * batch);
        expect(total).to.be.at.least(burst); // both made progress through the shared bucket
        expect(counts[0]).to.be.greaterThan(0);
        expect(counts[1]).to.be.greaterThan(0);
      } finally {
        await probe.quit();
      }
    });

    it('a changed limit is a fresh bucket (its own key); the old one is left to expire', async () => {
      const log = pino({ level: 'silent' });
      const n = await startCoordination({ url, base: new SystemClock(), log, prefix: testPrefix() });
      nodes.push(n);
      const k1 = n.rateLimiter.keyOf('task_type', 'x', { ratePerSecond: 1, burst: 1 });
      const k2 = n.rateLimiter.keyOf('task_type', 'x', { ratePerSecond: 2, burst: 1 });
      expect(k1).to.not.equal(k2);
      expect(n.rateLimiter.keyOf('tenant', 'a:b', { ratePerSecond: 1, burst: 1 })).to.match(/rl:tenant:1:1:a:b$/);
    });
  });
}
