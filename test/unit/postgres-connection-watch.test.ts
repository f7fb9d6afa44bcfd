/**
 * The PostgreSQL connection watch on a manual clock with a scripted probe: when it looks (every
 * 2 s healthy, every 1 s while the server is away, at once when asked), what it reports, and what
 * it leaves alone (errors that are not the server away; a `disk_full` fault a SELECT 1 says
 * nothing about).
 */
import { expect } from 'chai';
import { ManualClock } from '../../src/domain/clock';
import { ConnectionWatch } from '../../src/storage/postgres/connection-watch';
import { StoreHealth } from '../../src/storage/store-health';

/** Lets the watch's promise chains run. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
}

describe('PostgreSQL ConnectionWatch (manual clock)', () => {
  let clock: ManualClock;
  let health: StoreHealth;
  let watch: ConnectionWatch;
  let probes: number;
  let answer: () => Promise<void>;

  beforeEach(() => {
    clock = new ManualClock();
    health = new StoreHealth();
    probes = 0;
    answer = () => Promise.resolve();
    watch = new ConnectionWatch({
      clock,
      health,
      target: 'postgres://db:5432/s',
      probe: () => {
        probes++;
        return answer();
      },
    });
  });
  afterEach(async () => {
    await watch.stop();
    expect(clock.pendingTimers(), 'timers left behind').to.equal(0);
  });

  it('looks every 2 s while healthy; a refused connection is connection_lost; then every 1 s; a probe that succeeds ends it', async () => {
    watch.start();
    clock.advance(1999);
    await settle();
    expect(probes).to.equal(0);
    clock.advance(1);
    await settle();
    expect(probes).to.equal(1);
    expect(health.fault).to.equal(null);

    answer = () => Promise.reject(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }));
    clock.advance(2000);
    await settle();
    expect(health.fault).to.include({ kind: 'connection_lost', target: 'postgres://db:5432/s', recoverable: true });
    expect(health.fault?.since).to.equal(clock.now());
    clock.advance(1000);
    await settle();
    expect(probes).to.equal(3);

    answer = () => Promise.resolve();
    clock.advance(1000);
    await settle();
    expect(health.fault).to.equal(null);
    clock.advance(1000);
    await settle();
    expect(probes).to.equal(4); // healthy again: back to every 2 s
  });

  it('checkSoon looks at once (a dropped connection) instead of at the next tick', async () => {
    watch.start();
    answer = () => Promise.reject(new Error('Connection terminated unexpectedly'));
    watch.checkSoon();
    await settle();
    expect(probes).to.equal(1);
    expect(health.fault?.kind).to.equal('connection_lost');
  });

  it('an error that is not the server away reports nothing; a probe that succeeds does not end a disk_full fault', async () => {
    watch.start();
    answer = () => Promise.reject(Object.assign(new Error('permission denied for schema s'), { code: '42501' }));
    clock.advance(2000);
    await settle();
    expect(health.fault).to.equal(null);
    health.report({ kind: 'disk_full', target: 'pg', cause: '53100: could not extend file', recoverable: true, since: clock.now() });
    answer = () => Promise.resolve();
    clock.advance(2000);
    await settle();
    expect(health.fault?.kind).to.equal('disk_full');
  });

  describe('stalled: a write transaction running too long while the server answers', () => {
    let busySince: number | null;
    let stalling: ConnectionWatch;
    beforeEach(() => {
      busySince = null;
      stalling = new ConnectionWatch({
        clock,
        health,
        target: 'postgres://db:5432/s',
        probe: () => answer(),
        writesBusySince: () => busySince,
        stallMs: 10_000,
      });
    });
    afterEach(() => stalling.stop());

    it('is reported once a batch has run stallMs, looked at every 1 s then, and ended by the watch once no batch runs that long', async () => {
      stalling.start();
      busySince = clock.now();
      clock.advance(8000); // looks at 2, 4, 6, 8 s: under 10 s
      await settle();
      expect(health.fault).to.equal(null);
      clock.advance(2000);
      await settle();
      expect(health.fault).to.include({ kind: 'stalled', target: 'postgres://db:5432/s', recoverable: true, since: clock.now() });
      expect(health.fault?.cause).to.match(/has run 10 s while the server answers/);
      busySince = clock.now() - 500; // the held batch ended; the next one is 0.5 s old
      clock.advance(1000);
      await settle();
      expect(health.fault).to.equal(null);
    });

    it('a server away wins over it (connection_lost), and it never replaces another fault', async () => {
      stalling.start();
      busySince = clock.now();
      answer = () => Promise.reject(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }));
      clock.advance(12_000);
      await settle();
      expect(health.fault?.kind).to.equal('connection_lost');
      answer = () => Promise.resolve();
      clock.advance(1000); // the server answers; the batch still runs: the stall shows at once
      await settle();
      expect(health.fault?.kind).to.equal('stalled');
      health.recovered();
      health.report({ kind: 'disk_full', target: 'pg', cause: '53100: could not extend file', recoverable: true, since: clock.now() });
      clock.advance(2000);
      await settle();
      expect(health.fault?.kind).to.equal('disk_full');
    });
  });
});
