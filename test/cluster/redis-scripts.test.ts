import { expect } from 'chai';
import Redis from 'ioredis';
import { defineScripts, ScriptCommands } from '../../src/cluster/redis/scripts/index';
import { NEEDS_REDIS, REDIS_URL, redisClient, testPrefix } from '../helpers/redis';

/** Server time in ms (the scripts' clock). */
async function serverMs(c: Redis): Promise<number> {
  const [s, us] = await c.time();
  return Number(s) * 1000 + Number(us) / 1000;
}

if (!REDIS_URL) {
  describe('Redis token-bucket scripts', () => {
    it.skip(NEEDS_REDIS, () => undefined);
  });
} else {
  describe('Redis token-bucket scripts (take-tokens.lua, return-tokens.lua)', () => {
    let a: Redis & ScriptCommands;
    let b: Redis & ScriptCommands;
    let prefix: string;
    before(() => {
      a = defineScripts(redisClient());
      b = defineScripts(redisClient());
    });
    beforeEach(() => {
      prefix = testPrefix();
    });
    afterEach(async () => {
      const keys = await a.keys(`${prefix}*`);
      if (keys.length > 0) await a.del(...keys);
    });
    after(async () => {
      await Promise.all([a.quit(), b.quit()]);
    });

    it('a new bucket is full: the burst at once (partial grant when more is asked), then none with the ETA of the next token', async () => {
      const key = `${prefix}burst`;
      const rate = 0.5; // one token per 2 s: no whole token refills during the test
      expect((await a.takeTokens(key, rate, 5, 3)).slice(0, 2)).to.deep.equal([3, 0]);
      const [granted, waitMs] = await a.takeTokens(key, rate, 5, 10);
      expect(granted).to.equal(2);
      expect(waitMs).to.be.within(1, 2000);
      const [none, wait2] = await a.takeTokens(key, rate, 5, 1);
      expect(none).to.equal(0);
      expect(wait2).to.be.within(1, 2000);
    });

    it('refills at the rate on the server clock (the ETA says when; no earlier grant)', async () => {
      const key = `${prefix}refill`;
      const rate = 20; // one token per 50 ms
      expect((await a.takeTokens(key, rate, 1, 1))[0]).to.equal(1);
      const [, waitMs, at] = await a.takeTokens(key, rate, 1, 1);
      expect(waitMs).to.be.within(1, 50);
      // Wait (on the server clock) until the ETA has passed, then one token is there. `at` is the
      // script's time floored to the ms, so the ETA is reached at most 1 ms after at + waitMs.
      while ((await serverMs(a)) < at + waitMs + 1) await new Promise((r) => setImmediate(r));
      expect((await a.takeTokens(key, rate, 1, 1))[0]).to.equal(1);
    });

    it('a server clock that stepped back an hour: the bucket refills from the new reading, not an hour later', async () => {
      const key = `${prefix}stepped`;
      const rate = 20; // one token per 50 ms
      // The state an earlier reading left: empty at a server time an hour ahead of the clock now.
      await a.hset(key, 'tokens', '0', 'at', String((await serverMs(a)) + 3_600_000));
      const [none, waitMs, at] = await a.takeTokens(key, rate, 1, 1);
      expect(none).to.equal(0);
      expect(waitMs).to.be.within(1, 50);
      while ((await serverMs(a)) < at + waitMs + 1) await new Promise((r) => setImmediate(r));
      expect((await a.takeTokens(key, rate, 1, 1))[0], 'refilled within its ETA').to.equal(1);
      await a.hset(key, 'tokens', '0', 'at', String((await serverMs(a)) + 3_600_000));
      await a.returnTokens(key, rate, 1, 1);
      const [back] = await a.takeTokens(key, rate, 1, 1);
      expect(back, 'a return after the step is there at once').to.equal(1);
      const [, wait3] = await a.takeTokens(key, rate, 1, 1);
      expect(wait3, 'and the next refill counts from now').to.be.within(1, 50);
    });

    it('two clients racing on one bucket are never granted more than burst + rate × elapsed together', async () => {
      const key = `${prefix}race`;
      const rate = 50;
      const burst = 20;
      const start = await serverMs(a);
      const calls: Array<Promise<[number, number, number]>> = [];
      for (let i = 0; i < 200; i++) {
        calls.push(a.takeTokens(key, rate, burst, 3));
        calls.push(b.takeTokens(key, rate, burst, 3));
      }
      const replies = await Promise.all(calls);
      const end = await serverMs(a);
      const granted = replies.reduce((sum, [g]) => sum + g, 0);
      expect(granted).to.be.at.least(burst);
      // start and end are the server time floored to the ms: the scripts ran within end + 1 − start.
      expect(granted).to.be.at.most(burst + Math.floor((rate * (end + 1 - start)) / 1000));
    });

    it('returned tokens go back, capped at the burst; returning to an absent (full) bucket writes nothing', async () => {
      const key = `${prefix}return`;
      const rate = 0.01;
      expect((await a.takeTokens(key, rate, 4, 4))[0]).to.equal(4);
      expect(await a.returnTokens(key, rate, 4, 3)).to.equal(3);
      expect(await a.returnTokens(key, rate, 4, 10)).to.equal(4);
      expect((await a.takeTokens(key, rate, 4, 10))[0]).to.equal(4);
      expect(await a.returnTokens(`${prefix}absent`, rate, 4, 2)).to.equal(4);
      expect(await a.exists(`${prefix}absent`)).to.equal(0);
    });

    it('the key expires once the bucket would be full again (absent reads as full)', async () => {
      const key = `${prefix}ttl`;
      await a.takeTokens(key, 10, 2, 2); // empty; full again after 200 ms
      const ttl = await a.pttl(key);
      expect(ttl).to.be.within(1000, 1200 + 5);
    });

    it('refuses bad arguments with an error reply and writes nothing', async () => {
      const key = `${prefix}bad`;
      for (const [rate, burst, n] of [
        [0, 1, 1],
        [1, 0.5, 1],
        [1, 1, 0],
        [Number.NaN, 1, 1],
        [1, 1e12, 1],
      ]) {
        let err: Error | null = null;
        await a.takeTokens(key, rate, burst, n).catch((e: Error) => (err = e));
        expect(String(err)).to.match(/take-tokens: rate in/);
      }
      let err: Error | null = null;
      await a.returnTokens(key, 1, 1, -1).catch((e: Error) => (err = e));
      expect(String(err)).to.match(/return-tokens: rate in/);
      expect(await a.exists(key)).to.equal(0);
    });
  });
}
