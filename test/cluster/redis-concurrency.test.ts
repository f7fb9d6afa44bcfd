import { expect } from 'chai';
import Redis from 'ioredis';
import pino from 'pino';
import { Registry } from 'prom-client';
import { Coordination, startCoordination } from '../../src/cluster/redis/coordination';
import { defineScripts, ScriptCommands } from '../../src/cluster/redis/scripts/index';
import { SystemClock } from '../../src/domain/clock';
import { ConcurrencyLimits } from '../../src/domain/concurrency-limits';
import { NEEDS_REDIS, REDIS_URL, redisClient, testPrefix } from '../helpers/redis';

/** Polls `check` every 10 ms until it holds (bounded): waiting for Redis' own clock to pass a lease's expiry. */
async function until(check: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * One node's dispatch of `n` tasks of `key`, as the dispatcher does it: a task starts when
 * tryAcquire grants a slot, runs `runMs`, then releases it; a refused start waits for the limits'
 * change callback (slots arrived, or a poll after an empty grant). `running` is shared by the
 * nodes of a test: the cluster-wide count, checked at every start.
 */
function runNode(limits: ConcurrencyLimits, key: string, n: number, runMs: number, running: { now: number; max: number }): Promise<void> {
  let left = n;
  let done = 0;
  return new Promise((resolve) => {
    const pump = () => {
      while (left > 0 && limits.tryAcquire(key, Date.now())) {
        left--;
        running.now++;
        running.max = Math.max(running.max, running.now);
        setTimeout(() => {
          running.now--;
          limits.release(key, Date.now());
          if (++done === n) resolve();
          pump();
        }, runMs);
      }
    };
    limits.onChange((k) => k === key && pump());
    pump();
  });
}

if (!REDIS_URL) {
  describe('Redis concurrency slots', () => {
    it.skip(NEEDS_REDIS, () => undefined);
  });
} else {
  const url = REDIS_URL;

  describe('Redis concurrency-slot scripts (acquire-slots.lua, renew-slots.lua)', () => {
    let c: Redis & ScriptCommands;
    let key: string;
    before(() => {
      c = defineScripts(redisClient());
    });
    beforeEach(() => {
      key = `${testPrefix()}cc:k`;
    });
    afterEach(async () => {
      await c.del(key);
    });
    after(async () => {
      await c.quit();
    });

    it('grants at most the limit over every holder; giving back frees slots once, never more', async () => {
      expect(await c.acquireSlots(key, 3, 2, 10_000, 'a:1')).to.deep.equal([2, 2]);
      expect(await c.acquireSlots(key, 3, 5, 10_000, 'b:1')).to.deep.equal([1, 3]);
      expect(await c.acquireSlots(key, 3, 1, 10_000, 'c:1')).to.deep.equal([0, 3]);
      expect(await c.renewSlots(key, 10_000, 0, 'a:1:1', 'a:1:1', 'nobody:1')).to.deep.equal([]);
      expect(await c.zcard(key)).to.equal(2);
      expect(await c.acquireSlots(key, 3, 5, 10_000, 'c:2')).to.deep.equal([1, 3]);
    });

    it("a holder's leases expire when not renewed (a crashed node's slots come back); an expired lease is never revived", async () => {
      expect(await c.acquireSlots(key, 2, 2, 100, 'dead:1')).to.deep.equal([2, 2]);
      expect((await c.acquireSlots(key, 2, 1, 10_000, 'live:1'))[0]).to.equal(0);
      await until(async () => (await c.acquireSlots(key, 2, 2, 10_000, 'live:2'))[0] === 2);
      // The dead holder comes back and renews: its leases are reported lost, the set stays at the limit.
      expect(await c.renewSlots(key, 10_000, 2, 'dead:1:1', 'dead:1:2')).to.deep.equal(['dead:1:1', 'dead:1:2']);
      expect(await c.zcard(key)).to.equal(2);
    });

    it('renewal extends live leases (they outlast their first ttl)', async () => {
      await c.acquireSlots(key, 1, 1, 300, 'a:1');
      for (let i = 0; i < 4; i++) {
        expect(await c.renewSlots(key, 300, 1, 'a:1:1')).to.deep.equal([]);
        await new Promise((r) => setTimeout(r, 100)); // 400 ms in all: past the first 300 ms ttl
      }
      expect((await c.acquireSlots(key, 1, 1, 300, 'b:1'))[0]).to.equal(0);
    });

    it('refuses bad arguments', async () => {
      const bad: Array<[number, number, number, string]> = [
        [0, 1, 100, 'h'],
        [1, 0, 100, 'h'],
        [1, 1, 0, 'h'],
        [1, 1, 100, ''],
      ];
      for (const [limit, wanted, ttl, holder] of bad) {
        let err: unknown = null;
        await c.acquireSlots(key, limit, wanted, ttl, holder).catch((e) => (err = e));
        expect(String(err)).to.match(/acquire-slots/);
      }
    });
  });

  describe('Redis concurrency slots across nodes (LeasedSlots)', function () {
    this.timeout(30_000);
    const nodes: Coordination[] = [];
    afterEach(async () => {
      await Promise.all(nodes.splice(0).map((n) => n.close()));
    });

    async function node(id: string, prefix: string, ttlMs = 15_000): Promise<{ coord: Coordination; limits: ConcurrencyLimits }> {
      const coord = await startCoordination({
        url,
        base: new SystemClock(),
        log: pino({ level: 'silent' }),
        nodeId: id,
        prefix,
        registry: new Registry(),
        concurrency: { ttlMs, pollMs: 20, idleMs: 20 },
      });
      nodes.push(coord);
      return { coord, limits: new ConcurrencyLimits(coord.concurrency) };
    }

    it('two nodes with 40 tasks each on a key limited to 3: never more than 3 running over both, all run', async () => {
      const prefix = testPrefix();
      const [a, b] = [await node('a', prefix), await node('b', prefix)];
      a.limits.set('k', 3);
      b.limits.set('k', 3);
      const running = { now: 0, max: 0 };
      await Promise.all([runNode(a.limits, 'k', 40, 5, running), runNode(b.limits, 'k', 40, 5, running)]);
      expect(running.max).to.equal(3);
      expect(a.limits.runningOf('k') + b.limits.runningOf('k')).to.equal(0);
      // Idle slots go back: nothing is held once both are done.
      const probe = redisClient();
      try {
        await until(async () => (await probe.zcard(a.coord.concurrency.keyOf('k'))) === 0);
      } finally {
        await probe.quit();
      }
    });

    it('a node that dies holding every slot: the others start once its leases expire', async () => {
      const prefix = testPrefix();
      const dead = await node('dead', prefix, 300);
      dead.limits.set('k', 2);
      expect([dead.limits.tryAcquire('k', Date.now())]).to.deep.equal([false]); // the first start asks Redis
      await until(async () => dead.limits.tryAcquire('k', Date.now()));
      await until(async () => dead.limits.tryAcquire('k', Date.now()));
      // It stops renewing without giving back (a crash): its connection is cut, its timers stopped.
      nodes.splice(nodes.indexOf(dead.coord), 1);
      dead.coord.connection.client.disconnect();
      dead.coord.clock.stop();

      const live = await node('live', prefix, 300);
      live.limits.set('k', 2);
      const t0 = Date.now();
      const running = { now: 0, max: 0 };
      await runNode(live.limits, 'k', 4, 5, running);
      expect(Date.now() - t0, "waited for the dead node's leases").to.be.at.least(150);
      expect(running.max).to.equal(2);
      dead.limits.close();
      await dead.coord.close();
    });

    it('the server loses the slot set (a restart without data, FLUSHALL): the running attempts ask for their slots again and the other node gets none', async () => {
      const prefix = testPrefix();
      const a = await node('a', prefix, 600);
      const b = await node('b', prefix, 600);
      a.limits.set('k', 2);
      b.limits.set('k', 2);
      expect(a.limits.tryAcquire('k', Date.now())).to.equal(false); // the first start asks Redis
      await until(async () => a.limits.tryAcquire('k', Date.now()));
      expect(a.limits.tryAcquire('k', Date.now())).to.equal(true);
      const probe = redisClient();
      try {
        const setKey = a.coord.concurrency.keyOf('k');
        const before = await probe.zrange(setKey, 0, -1);
        expect(before).to.have.length(2);
        await probe.del(setKey);
        // A's next renewal (every ttlMs / 3) finds both leases lost and asks for two slots again.
        await until(async () => {
          const now = await probe.zrange(setKey, 0, -1);
          return now.length === 2 && now.every((id) => !before.includes(id));
        });
        expect((await probe.zrange(setKey, 0, -1)).every((id) => id.startsWith('a:'))).to.equal(true);
        expect(b.limits.tryAcquire('k', Date.now())).to.equal(false);
        // B's request comes back empty: still no start beside A's two.
        await new Promise<void>((resolve) => b.limits.onChange(() => resolve()));
        expect(b.limits.tryAcquire('k', Date.now()), 'the limit holds across the lost set').to.equal(false);
      } finally {
        await probe.quit();
        a.limits.release('k', Date.now());
        a.limits.release('k', Date.now());
      }
    });
  });
}
