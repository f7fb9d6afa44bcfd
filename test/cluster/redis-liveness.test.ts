/**
 * A Redis server that holds the connection open but does not answer (frozen with SIGSTOP) is
 * reported `down`, not `up` (src/cluster/redis/redis-connection.ts, the liveness watch): before,
 * ioredis's status stayed `ready` and every command timed out in turn while readiness said Redis
 * was up. A private redis-server per test (test/helpers/redis.ts); the watch's timers run on a
 * ManualClock the test moves, and the test waits for the connection's events, not for time.
 */
import { expect } from 'chai';
import pino from 'pino';
import { RedisConnection } from '../../src/cluster/redis/redis-connection';
import { ManualClock } from '../../src/domain/clock';
import { hasRedisServer, OwnRedis, startOwnRedis } from '../helpers/redis';

/** Resolves with the next `up` value the connection reports. */
function nextChange(c: RedisConnection, want: boolean): Promise<void> {
  return new Promise((resolve) => c.onChange((up) => up === want && resolve()));
}

describe('Redis connection: a frozen server is reported down, and up again once it answers', function () {
  this.timeout(30_000);
  if (!hasRedisServer()) {
    it.skip('needs redis-server on PATH', () => undefined);
    return;
  }
  let redis: OwnRedis;
  let conn: RedisConnection;

  beforeEach(async () => {
    redis = await startOwnRedis();
    conn = new RedisConnection(redis.url, pino({ level: 'silent' }), undefined, { commandTimeoutMs: 300, maxReconnectDelayMs: 100 });
    expect(await conn.connect()).to.equal(true);
  });
  afterEach(async () => {
    await conn.close();
    await redis.stop();
  });

  it('a PING that times out on a frozen server drops the connection: down; thawed, it is up again', async () => {
    expect(await conn.checkLiveness()).to.equal(true);
    expect(conn.up).to.equal(true);
    redis.signal('SIGSTOP');
    const down = nextChange(conn, false);
    expect(await conn.checkLiveness()).to.equal(false);
    await down;
    expect(conn.up).to.equal(false);
    // Reconnecting against the frozen server does not make it ready: the ready check gets no answer.
    expect(await conn.checkLiveness()).to.equal(false);
    expect(conn.up).to.equal(false);
    const up = nextChange(conn, true);
    redis.signal('SIGCONT');
    await up;
    expect(conn.up).to.equal(true);
    expect(await conn.checkLiveness()).to.equal(true);
  });

  it('the watch pings on its clock: a frozen server is reported down without any other command', async () => {
    const clock = new ManualClock();
    conn.watchLiveness(clock);
    clock.advance(2000); // a look while the server answers
    expect(conn.up).to.equal(true);
    redis.signal('SIGSTOP');
    const down = nextChange(conn, false);
    // The look in progress ends (its PING times out) before the next is scheduled: advance until then.
    const ticking = setInterval(() => clock.advance(2000), 50);
    try {
      await down;
    } finally {
      clearInterval(ticking);
    }
    expect(conn.up).to.equal(false);
    redis.signal('SIGCONT');
    await conn.close();
    expect(clock.pendingTimers()).to.equal(0);
  });
});
