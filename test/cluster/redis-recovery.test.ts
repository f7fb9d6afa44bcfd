import { expect } from 'chai';
import pino from 'pino';
import { Registry } from 'prom-client';
import { RedisBus } from '../../src/cluster/redis/bus';
import { Coordination, startCoordination } from '../../src/cluster/redis/coordination';
import { RedisConnection } from '../../src/cluster/redis/redis-connection';
import { SystemClock } from '../../src/domain/clock';
import { hasRedisServer, NEEDS_REDIS, OwnRedis, REDIS_URL, startOwnRedis } from '../helpers/redis';
import { sink } from '../helpers/sink';
import { until } from '../helpers/store-fault-http';

/**
 * Redis coming back, or answering without taking commands, on a private redis-server the tests
 * stop, start and fill: a node that started while Redis was away subscribes to the coordination
 * channels once it answers (it never did before: its wake-ups were lost until a restart), and a
 * Redis out of memory makes the node `degraded` with one warning instead of looking healthy.
 */
if (!REDIS_URL || !hasRedisServer()) {
  describe('Redis recovery (a private redis-server)', () => {
    it.skip(`${NEEDS_REDIS} and redis-server on PATH`, () => undefined);
  });
} else {
  describe('Redis recovery (a private redis-server)', function () {
    this.timeout(30_000);
    let redis: OwnRedis | null = null;
    const closers: Array<() => Promise<void>> = [];
    afterEach(async () => {
      for (const close of closers.splice(0).reverse()) await close();
      await redis?.stop();
      redis = null;
    });

    it('a node started while Redis is away subscribes to the channels once it answers, and hears the others', async () => {
      const first = await startOwnRedis();
      const port = first.port;
      await first.stop();
      const out = sink();
      const log = pino({ level: 'debug' }, out);
      const connection = new RedisConnection(first.url, log, undefined, { maxReconnectDelayMs: 100, connectTimeoutMs: 500 });
      closers.push(() => connection.close());
      expect(await connection.connect()).to.equal(false);
      const bus = new RedisBus(connection, 'late', log);
      const heard: unknown[] = [];
      bus.on('cron', (msg) => void heard.push(msg));
      await bus.start();
      expect(bus.deaf).to.equal(true);
      // The queued SUBSCRIBE fails at the first failed reconnection: the case that never recovered.
      await until(() => out.text().includes('coordination channels not subscribed yet'), 10_000, 'the refused SUBSCRIBE');
      redis = await startOwnRedis(port);
      await until(() => !bus.deaf, 10_000, 'the subscription once Redis answers');
      const other = new RedisConnection(redis.url, pino({ level: 'silent' }));
      closers.push(() => other.close());
      await other.connect();
      const otherBus = new RedisBus(other, 'other', pino({ level: 'silent' }));
      expect(await otherBus.publish('cron', { cronId: 'c1' })).to.equal(1);
      await until(() => heard.length === 1, 5000, 'the message on the late node');
      expect(heard[0]).to.deep.include({ cronId: 'c1', from: 'other' });
    });

    it('Redis out of memory (noeviction): status down with one warning, limits per node; up again once it takes commands', async () => {
      redis = await startOwnRedis();
      const out = sink();
      const coord: Coordination = await startCoordination({
        url: redis.url,
        base: new SystemClock(),
        log: pino({ level: 'info' }, out),
        nodeId: 'n1',
        registry: new Registry(),
        rateLimits: { retryAfterMs: 50 },
        connection: { livenessIntervalMs: 100 },
      });
      closers.push(() => coord.close());
      await coord.bus.start();
      expect(coord.status()).to.equal('up');
      const admin = new RedisConnection(redis.url, pino({ level: 'silent' }));
      closers.push(() => admin.close());
      await admin.connect();
      await admin.client.config('SET', 'maxmemory-policy', 'noeviction');
      await admin.client.config('SET', 'maxmemory', '1');
      // The first write after the change may still pass (Redis judges memory at the next command): refused from here on.
      await until(
        async () =>
          admin.client.set('probe', 'x').then(
            () => false,
            (err: Error) => /OOM/.test(err.message),
          ),
        5000,
        'OOM',
      );
      let wakes = 0;
      const bucket = coord.rateLimiter.bucket('task_type', 'echo', { ratePerSecond: 1000, burst: 10 }, Date.now(), () => wakes++);
      // Each take asks Redis when the bucket holds no stock; a refused one decides locally for retryAfterMs.
      await until(
        () => {
          bucket.tryTake(Date.now());
          return coord.status() === 'down';
        },
        5000,
        'the refusal',
      );
      expect(coord.connection.up, 'the connection itself is fine').to.equal(true);
      expect(coord.connection.refusing).to.match(/OOM/);
      const refusedAt = wakes;
      await until(
        () => {
          bucket.tryTake(Date.now());
          return wakes >= refusedAt + 5;
        },
        5000,
        'five more refused requests',
      );
      const warnings = out
        .text()
        .split('\n')
        .filter((l) => l.includes('Redis refuses commands'));
      expect(warnings, 'one warning, not one per refused call').to.have.length(1);
      expect(coord.status()).to.equal('down');
      await admin.client.config('SET', 'maxmemory', '0');
      // No limit asks Redis meanwhile: the liveness watch's probe write ends the refusal.
      await until(() => coord.status() === 'up', 5000, 'the commands taken again');
      expect(out.text()).to.include('Redis takes commands again');
    });
  });
}
