import { expect } from 'chai';
import { ManualClock } from '../../src/domain/clock';
import { StoreUnavailableError } from '../../src/domain/errors';
import { httpStatusOf } from '../../src/contract/error-catalog';
import { FileWatch } from '../../src/storage/sqlite/file-watch';
import { FileIdentity, sqliteFaultOf, STORE_FILE_MOVED } from '../../src/storage/sqlite/store-faults';
import { logStoreHealth, StoreFault, StoreHealth, storeUnavailable } from '../../src/storage/store-health';
import { mongoFaultOf, serversOf, watchedWrite, watchTopology } from '../../src/storage/mongo/connection-health';
import { EventEmitter } from 'node:events';
import type { MongoClient } from 'mongodb';

const flush = () => new Promise((r) => setImmediate(r));
const FILE = '/data/scheduler.db';

function fault(kind: StoreFault['kind'], recoverable: boolean): StoreFault {
  return { kind, target: FILE, cause: 'test', recoverable, since: 0 };
}

describe('StoreHealth', () => {
  it('tells listeners of changes only: a fault, a repeat of it (nothing), its end', () => {
    const health = new StoreHealth();
    const heard: Array<string | null> = [];
    health.onChange((f) => heard.push(f?.kind ?? null));
    health.report(fault('disk_full', true));
    health.report(fault('disk_full', true));
    health.recovered();
    health.recovered();
    expect(heard).to.deep.equal(['disk_full', null]);
  });

  it('a fault that is not recoverable replaces a recoverable one, is never replaced and never cleared', () => {
    const health = new StoreHealth();
    health.report(fault('disk_full', true));
    health.report(fault('file_deleted', false));
    health.report(fault('io_error', true));
    health.report(fault('file_replaced', false));
    health.recovered();
    expect(health.fault?.kind).to.equal('file_deleted');
  });

  it('logs one error line per fault (file, cause, next step) and one info line at its end', () => {
    const health = new StoreHealth();
    const lines: Array<[string, object, string]> = [];
    const log = {
      error: (o: object, m: string) => lines.push(['error', o, m]),
      warn: (o: object, m: string) => lines.push(['warn', o, m]),
      info: (o: object, m: string) => lines.push(['info', o, m]),
    };
    let now = 1000;
    const stop = logStoreHealth(health, log, () => now);
    health.report({ ...fault('disk_full', true), since: 1000, cause: 'SQLITE_FULL database or disk is full' });
    health.report({ ...fault('disk_full', true), since: 1500 });
    now = 4000;
    health.recovered();
    stop();
    health.report(fault('disk_full', true));
    expect(lines.map(([level]) => level)).to.deep.equal(['error', 'info']);
    expect(lines[0][2]).to.match(/^store unavailable: disk_full on \/data\/scheduler\.db: SQLITE_FULL .*until space is freed/);
    expect(lines[1][1]).to.include({ unavailable_ms: 3000 });
  });

  it('a fault that keeps coming back within 10 s of its end is counted in one warning a minute, not logged each time', () => {
    const health = new StoreHealth();
    const lines: Array<[string, Record<string, unknown>, string]> = [];
    const log = {
      error: (o: object, m: string) => lines.push(['error', o as Record<string, unknown>, m]),
      warn: (o: object, m: string) => lines.push(['warn', o as Record<string, unknown>, m]),
      info: (o: object, m: string) => lines.push(['info', o as Record<string, unknown>, m]),
    };
    let now = 0;
    const stop = logStoreHealth(health, log, () => now);
    const lost = () => health.report({ ...fault('connection_lost', true), since: now, cause: '53300: sorry, too many clients already' });
    // A pool that cannot open connections while its open ones answer: a fault, its end, every 300 ms for 90 s.
    for (; now < 90_000; now += 200) {
      lost();
      now += 100;
      health.recovered();
    }
    expect(lines.map(([level]) => level)).to.deep.equal(['error', 'info', 'warn', 'warn']);
    expect(lines[2][2]).to.match(/^store fault connection_lost on \/data\/scheduler\.db keeps coming back \(1 time\(s\) within 10 s/);
    expect(lines[3][1]).to.include({ returns: 200 }); // one every 300 ms in the 60 s after the first warning
    // Quiet for longer than the window: the next one is a new fault, logged in full, its end too.
    now += 10_000;
    lost();
    now += 500;
    health.recovered();
    stop();
    expect(lines.slice(4).map(([level]) => level)).to.deep.equal(['error', 'info']);
  });

  it('the 503 of a fault is STORE_UNAVAILABLE, retryable, with Retry-After seconds and the fault in details', () => {
    const err = storeUnavailable(fault('file_deleted', false));
    expect(err).to.be.instanceOf(StoreUnavailableError);
    expect(err).to.include({ code: 'STORE_UNAVAILABLE', retryable: true });
    expect(httpStatusOf(err.code)).to.equal(503);
    expect(err.details).to.deep.include({ fault: 'file_deleted', target: FILE, recoverable: false, retry_after_seconds: 5 });
  });
});

describe('store fault classification', () => {
  const cases: Array<[string, string, StoreFault['kind'] | null, boolean?]> = [
    ['SQLITE_FULL', 'database or disk is full', 'disk_full', true],
    ['SQLITE_IOERR_WRITE', 'disk I/O error', 'io_error', true],
    ['SQLITE_IOERR_FSYNC', 'disk I/O error', 'io_error', true],
    ['SQLITE_READONLY', 'attempt to write a readonly database', 'read_only', true],
    ['SQLITE_READONLY_DBMOVED', 'attempt to write a readonly database', 'file_replaced', false],
    ['SQLITE_CANTOPEN', 'unable to open database file', 'cannot_open', true],
    ['SQLITE_CORRUPT', 'database disk image is malformed', 'corrupt', false],
    ['SQLITE_NOTADB', 'file is not a database', 'corrupt', false],
    [STORE_FILE_MOVED, `the database file ${FILE} was deleted while the service had it open`, 'file_deleted', false],
    ['SQLITE_BUSY', 'database is locked', 'stalled', true],
    ['SQLITE_BUSY_SNAPSHOT', 'database is locked', 'stalled', true],
    ['SQLITE_CONSTRAINT_UNIQUE', 'UNIQUE constraint failed', null],
    ['', 'a bug', null],
  ];
  for (const [code, message, kind, recoverable] of cases) {
    it(`${code || 'no code'} → ${kind ?? 'not a store fault'}`, () => {
      const f = sqliteFaultOf(Object.assign(new Error(message), { code }), FILE, 7);
      if (kind === null) expect(f).to.equal(null);
      else expect(f).to.deep.include({ kind, recoverable, target: FILE, since: 7 });
    });
  }

  it('MongoDB: network errors are connection_lost (recoverable) on the servers, without credentials', () => {
    const target = serversOf('mongodb://user:secret@db1:27017,db2:27017/sched?replicaSet=rs');
    expect(target).to.equal('mongodb://db1:27017,db2:27017');
    const err = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:27017'), { name: 'MongoServerSelectionError' });
    expect(mongoFaultOf(err, target, 5)).to.deep.include({ kind: 'connection_lost', recoverable: true, target });
    expect(mongoFaultOf(Object.assign(new Error('E11000'), { name: 'MongoServerError' }), target, 5)).to.equal(null);
  });
});

describe('MongoDB connection health', () => {
  /** A topology event with these servers (`error` set: the driver's last look at it failed). */
  const topology = (...servers: Array<{ isWritable: boolean; error?: Error }>) =>
    ({
      newDescription: { servers: new Map(servers.map((s, i) => [`db${i}:27017`, { address: `db${i}:27017`, error: null, ...s }])) },
    }) as never;

  it('no writable server after a failed look is connection_lost; a writable one again ends it; an unknown server is no fault', () => {
    const client = new EventEmitter() as unknown as MongoClient;
    const health = new StoreHealth();
    const stop = watchTopology(client, health, 'mongodb://db0:27017', { now: () => 9 });
    client.emit('topologyDescriptionChanged', topology({ isWritable: false }));
    expect(health.fault).to.equal(null);
    client.emit('topologyDescriptionChanged', topology({ isWritable: false, error: new Error('connect ECONNREFUSED') }));
    expect(health.fault).to.deep.include({ kind: 'connection_lost', target: 'mongodb://db0:27017', recoverable: true, since: 9 });
    expect(health.fault?.cause).to.match(/db0:27017: connect ECONNREFUSED/);
    client.emit('topologyDescriptionChanged', topology({ isWritable: true }));
    expect(health.fault).to.equal(null);
    stop();
    expect((client as unknown as EventEmitter).listenerCount('topologyDescriptionChanged')).to.equal(0);
  });

  it('a write failing for the network answers STORE_UNAVAILABLE and records the fault; the next write that succeeds ends it', async () => {
    const health = new StoreHealth();
    const clock = { now: () => 1 };
    const lost = Object.assign(new Error('connection closed'), { name: 'MongoNetworkError' });
    const err = await watchedWrite(Promise.reject(lost), health, 'mongodb://db0:27017', clock).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(StoreUnavailableError);
    expect(health.fault?.kind).to.equal('connection_lost');
    const other = new Error('E11000 duplicate key');
    expect(await watchedWrite(Promise.reject(other), health, 'x', clock).catch((e: unknown) => e)).to.equal(other);
    expect(await watchedWrite(Promise.resolve(7), health, 'x', clock)).to.equal(7);
    expect(health.fault).to.equal(null);
  });
});

/** A watch over fake file looks, free space and probe, on a manual clock (interval 1 s). */
function watchFixture() {
  const clock = new ManualClock();
  const health = new StoreHealth();
  const opened: FileIdentity = { dev: 1, ino: 100 };
  const wal: FileIdentity = { dev: 1, ino: 200 };
  const world = {
    at: opened as FileIdentity | null,
    walAt: wal as FileIdentity | null,
    free: 1_000_000 as number | null,
    probeFails: null as Error | null,
    probes: 0,
    /** What a reclaim does: the bytes it frees, or an error it throws. */
    reclaimFrees: 0 as number | Error,
    reclaims: 0,
  };
  const watch = new FileWatch({
    file: FILE,
    opened,
    wal,
    clock,
    health,
    probe: async () => {
      world.probes++;
      if (world.probeFails) throw world.probeFails;
    },
    stat: (file) => (file === `${FILE}-wal` ? world.walAt : world.at),
    freeBytes: () => world.free,
    reclaim: async () => {
      world.reclaims++;
      if (world.reclaimFrees instanceof Error) throw world.reclaimFrees;
      world.free = (world.free ?? 0) + world.reclaimFrees;
    },
  });
  /** Advances one interval and lets the look finish. */
  const tick = async () => {
    clock.advance(1000);
    await flush();
  };
  return { clock, health, watch, world, tick };
}

describe('FileWatch (manual clock)', () => {
  it('a deleted file is a fault that is not recoverable, seen within one interval', async () => {
    const f = watchFixture();
    f.watch.start();
    await f.tick();
    expect(f.health.fault).to.equal(null);
    f.world.at = null;
    f.clock.advance(999);
    await flush();
    expect(f.health.fault).to.equal(null);
    await f.tick();
    expect(f.health.fault).to.deep.include({ kind: 'file_deleted', recoverable: false, target: FILE });
    f.world.at = { dev: 1, ino: 100 }; // the same file back does not heal it: writes since went nowhere
    await f.tick();
    expect(f.health.fault?.kind).to.equal('file_deleted');
    expect(f.world.probes).to.equal(0);
    await f.watch.stop();
  });

  it('its write-ahead log deleted or replaced is a fault that is not recoverable, naming the log', async () => {
    for (const [walAt, kind] of [
      [null, 'file_deleted'],
      [{ dev: 1, ino: 201 }, 'file_replaced'],
    ] as const) {
      const f = watchFixture();
      f.watch.start();
      await f.tick();
      expect(f.health.fault).to.equal(null);
      f.world.walAt = walAt;
      await f.tick();
      expect(f.health.fault).to.deep.include({ kind, recoverable: false, target: FILE });
      expect(f.health.fault?.cause).to.include(`write-ahead log ${FILE}-wal`);
      await f.watch.stop();
    }
  });

  it('a replaced file (another inode, or another device) is file_replaced', async () => {
    for (const other of [
      { dev: 1, ino: 101 },
      { dev: 2, ino: 100 },
    ]) {
      const f = watchFixture();
      f.watch.start();
      f.world.at = other;
      await f.tick();
      expect(f.health.fault).to.deep.include({ kind: 'file_replaced', recoverable: false });
      await f.watch.stop();
    }
  });

  it('no space left is disk_full before any write fails; it ends once space is back and a probe write commits', async () => {
    const f = watchFixture();
    f.watch.start();
    f.world.free = 0;
    await f.tick();
    expect(f.health.fault).to.deep.include({ kind: 'disk_full', recoverable: true });
    await f.tick();
    expect(f.world.probes).to.equal(0); // no write tried while the volume is full
    f.world.free = 10_000_000;
    f.world.probeFails = Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
    await f.tick();
    expect(f.world.probes).to.equal(1);
    expect(f.health.fault?.kind).to.equal('disk_full');
    f.world.probeFails = null;
    await f.tick();
    expect(f.health.fault).to.equal(null);
    await f.tick();
    expect(f.world.probes).to.equal(2); // healthy: no more probes
    await f.watch.stop();
  });

  it("on a full volume it first asks the store to give back its log's spare space: a refused write's WAL no longer keeps it full", async () => {
    const f = watchFixture();
    f.watch.start();
    await f.tick();
    expect(f.world.reclaims).to.equal(0); // space left: nothing to give back
    // A refused write filled the volume with WAL frames past the last commit.
    f.health.report(fault('disk_full', true));
    f.world.free = 0;
    f.world.reclaimFrees = Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
    await f.tick();
    expect(f.world.reclaims).to.equal(1);
    expect(f.health.fault?.kind).to.equal('disk_full'); // a failed reclaim is no crash and no new fault
    expect(f.world.probes).to.equal(0);
    f.world.reclaimFrees = 20_000_000;
    await f.tick();
    expect(f.world.reclaims).to.equal(2);
    expect(f.world.probes).to.equal(1);
    expect(f.health.fault).to.equal(null);
    await f.tick();
    expect(f.world.reclaims).to.equal(2);
    await f.watch.stop();
  });

  it('a fault reported by a failed write (I/O error) ends when the probe commits; free space unknown is no fault', async () => {
    const f = watchFixture();
    f.world.free = null;
    f.watch.start();
    f.health.report(fault('io_error', true));
    await f.tick();
    expect(f.health.fault).to.equal(null);
    await f.watch.stop();
  });

  it('stop() cancels the next look; the interval is at most 1 s', async () => {
    const f = watchFixture();
    const slow = new FileWatch({
      file: FILE,
      opened: { dev: 1, ino: 1 },
      clock: f.clock,
      health: f.health,
      probe: async () => undefined,
      intervalMs: 60_000,
      stat: () => null,
      freeBytes: () => null,
    });
    slow.start();
    f.clock.advance(1000);
    await flush();
    expect(f.health.fault?.kind).to.equal('file_deleted');
    await slow.stop();
    f.watch.start();
    await f.watch.stop();
    expect(f.clock.pendingTimers()).to.equal(0);
  });
});
