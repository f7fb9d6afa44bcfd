import { expect } from 'chai';
import { terminal, useInProcessScheduler } from '../helpers/in-process-scheduler';
import { hasRedisServer, NEEDS_REDIS, OwnRedis, REDIS_URL, startOwnRedis } from '../helpers/redis';

/**
 * Cluster coordination through an outage: the real scheduler (store, actors, forked workers) on a
 * private redis-server that the test stops and starts again. While Redis is away /readyz says
 * `degraded`, tasks keep running, and the rate limit is applied by the local bucket (counted).
 */
if (!REDIS_URL || !hasRedisServer()) {
  describe('degraded mode (Redis stopped)', () => {
    it.skip(`${NEEDS_REDIS} and redis-server on PATH`, () => undefined);
  });
} else {
  describe('degraded mode: Redis stopped and started again under a running scheduler', function () {
    this.timeout(60_000);
    let redis: OwnRedis;
    before(async () => {
      redis = await startOwnRedis();
    });
    after(async () => {
      await redis?.stop();
    });
    const s = useInProcessScheduler(
      { workers: 1, workerConcurrency: 4, partitions: 2, rateLimits: { echo: { ratePerSecond: 1000, burst: 5 } } },
      () => ({
        redisUrl: redis.url,
      }),
    );

    const readyz = async () => (await s.scheduler.app.inject({ method: 'GET', url: '/readyz' })).json();
    const metric = async (pattern: RegExp): Promise<number> => {
      const text = (await s.scheduler.app.inject({ method: 'GET', url: '/metrics' })).body;
      const m = text.match(pattern);
      return m ? Number(m[1]) : 0;
    };
    const runEchoes = async (n: number) => {
      const ids = await Promise.all(
        Array.from({ length: n }, (_, i) => s.scheduler.service.submit({ task_type: 'echo', payload: i }).then((a) => a.task_id)),
      );
      for (const id of ids) expect(await s.waitFor(id, terminal)).to.include({ status: 'SUCCEEDED' });
    };
    /** Resolves at the next change of the Redis connection to `up` (an event, not a timer). */
    const connection = (up: boolean) =>
      new Promise<void>((resolve) => {
        const c = s.scheduler.coordination!.connection;
        if (c.up === up) return resolve();
        c.onChange((now) => now === up && resolve());
      });

    it('with Redis up: ready, clock synced, rate-limited tasks run on tokens leased from Redis', async () => {
      expect(await readyz()).to.deep.equal({ status: 'ready', store: true, redis: 'up' });
      expect(s.scheduler.coordination?.clock.isSynced).to.equal(true);
      await runEchoes(20);
      expect(await metric(/scheduler_redis_token_leases_total\{limit="task_type",result="granted"\} (\d+)/)).to.be.greaterThan(0);
      expect(await metric(/scheduler_redis_up (\d+)/)).to.equal(1);
      expect(await metric(/scheduler_redis_rate_limit_fallbacks_total\{limit="task_type"\} (\d+)/)).to.equal(0);
    });

    it('Redis stopped: /readyz 200 degraded, tasks still run, the local bucket limits them (counted)', async () => {
      await redis.stop();
      await connection(false);
      const res = await s.scheduler.app.inject({ method: 'GET', url: '/readyz' });
      expect(res.statusCode).to.equal(200);
      expect(res.json()).to.deep.equal({ status: 'degraded', store: true, redis: 'down' });
      await runEchoes(20);
      expect(await metric(/scheduler_redis_rate_limit_fallbacks_total\{limit="task_type"\} (\d+)/)).to.be.at.least(20);
      expect(await metric(/scheduler_redis_up (\d+)/)).to.equal(0);
    });

    it('Redis back: ready again and leases resume', async () => {
      const fallbacks = await metric(/scheduler_redis_rate_limit_fallbacks_total\{limit="task_type"\} (\d+)/);
      const granted = await metric(/scheduler_redis_token_leases_total\{limit="task_type",result="granted"\} (\d+)/);
      redis = await startOwnRedis(redis.port);
      await connection(true);
      expect(await readyz()).to.deep.equal({ status: 'ready', store: true, redis: 'up' });
      await runEchoes(10);
      expect(await metric(/scheduler_redis_rate_limit_fallbacks_total\{limit="task_type"\} (\d+)/)).to.equal(fallbacks);
      expect(await metric(/scheduler_redis_token_leases_total\{limit="task_type",result="granted"\} (\d+)/)).to.be.greaterThan(granted);
    });
  });

  describe('degraded mode: Redis unreachable at start', function () {
    this.timeout(60_000);
    const s = useInProcessScheduler(
      { workers: 1, workerConcurrency: 2, partitions: 2, rateLimits: { echo: { ratePerSecond: 1000, burst: 10 } } },
      () => ({
        redisUrl: 'redis://127.0.0.1:1', // nothing listens on port 1
      }),
    );

    it('starts anyway, degraded, on the local clock, and runs tasks', async () => {
      const res = await s.scheduler.app.inject({ method: 'GET', url: '/readyz' });
      expect(res.statusCode).to.equal(200);
      expect(res.json()).to.deep.equal({ status: 'degraded', store: true, redis: 'down' });
      expect(s.scheduler.coordination?.clock.isSynced).to.equal(false);
      const { task_id } = await s.scheduler.service.submit({ task_type: 'echo', payload: 'x' });
      expect(await s.waitFor(task_id, terminal)).to.include({ status: 'SUCCEEDED' });
    });
  });
}
