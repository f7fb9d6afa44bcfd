import { expect } from 'chai';
import { Client } from 'pg';
import pino from 'pino';
import { Registry } from 'prom-client';
import type { ActorRouter } from '../../src/actors/router';
import { attachPeers, relayTaskEnds } from '../../src/actors/peers';
import { PgCoordination, startPgCoordination } from '../../src/cluster/postgres/pg-coordination';
import { Clock, ManualClock, SystemClock, TimerHandle } from '../../src/domain/clock';
import type { DueEntry } from '../../src/domain/task';
import { TaskEndEvents } from '../../src/services/task-end-events';
import type { TaskEnds } from '../../src/services/ports';
import { routerWith } from '../helpers/actor-deps';
import { freshSchema, postgresUrl } from '../helpers/postgres-schema';

interface Told {
  to: string;
  msg: string;
  body: unknown;
}

/** A router whose actors record what they are told; `owned` partitions have an owner here. */
function fakeRouter(name: string, owned: number[], told: Told[], onTold: () => void): ActorRouter {
  const ref = (to: string) => ({ tell: (msg: string, body: unknown) => (told.push({ to: `${name}/${to}`, msg, body }), onTold()) });
  const owners: unknown[] = [];
  for (const p of owned) owners[p] = ref(`partition-${p}`);
  return routerWith({ dispatcher: ref('dispatcher'), owners });
}

const entry = (id: string, partition: number, dueAt: number): DueEntry => ({
  id,
  partition,
  seq: 0,
  dueAt,
  priority: 'high',
  tenantId: 't1',
  taskType: 'echo',
  state: 'PENDING',
});

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

const url = postgresUrl();
const log = pino({ level: 'silent' });

if (!url) {
  describe('PostgreSQL LISTEN/NOTIFY coordination', () => {
    it.skip('needs POSTGRES_URL (`source .ci/services.sh` starts PostgreSQL)', () => undefined);
  });
} else {
  describe('PostgreSQL LISTEN/NOTIFY coordination (wake a partition owner, deliver a cancel, survive a dropped connection)', () => {
    const told: Told[] = [];
    let waiters: Array<() => void> = [];
    const onTold = () => {
      const w = waiters;
      waiters = [];
      for (const f of w) f();
    };
    /** Resolves once `cond` holds (checked at every delivery: waits for events, not time). */
    const until = (cond: () => boolean) =>
      new Promise<void>((resolve) => {
        const check = () => (cond() ? resolve() : waiters.push(check));
        check();
      });
    let nodeA: PgCoordination;
    let nodeB: PgCoordination;
    let dirA: ActorRouter;
    let dirB: ActorRouter;
    const registryB = new Registry();
    const schema = freshSchema('notify');
    const horizonMs = 30_000;

    before(async () => {
      nodeA = await startPgCoordination({ url, schema, base: new SystemClock(), log, nodeId: 'node-a' });
      nodeB = await startPgCoordination({ url, schema, base: new SystemClock(), log, nodeId: 'node-b', registry: registryB });
      dirA = fakeRouter('A', [0, 1], told, onTold);
      dirB = fakeRouter('B', [1, 2], told, onTold); // B owns 1 and 2, not 0
      await attachPeers(nodeA, dirA, horizonMs);
      await attachPeers(nodeB, dirB, horizonMs);
    });
    after(async () => {
      await Promise.all([nodeA.close(), nodeB.close()]);
    });
    beforeEach(() => told.splice(0));

    it('both nodes listen on their own connection', () => {
      expect(nodeA.status()).to.equal('up');
      expect(nodeB.status()).to.equal('up');
      expect(nodeA.listener.backendPid).to.be.a('number').and.not.equal(nodeB.listener.backendPid);
    });

    it('a task due inside the horizon, stored on A, wakes the owner of its partition on B; none for a partition A owns; never echoed back to A', async () => {
      const now = Date.now();
      dirA.offer([entry('soon', 2, now + 1000), entry('later', 2, now + horizonMs + 60_000), entry('mine', 1, now)]);
      await until(() => told.some((t) => t.to === 'B/partition-2'));
      expect(told.find((t) => t.to === 'B/partition-2')?.body).to.deep.equal([entry('soon', 2, now + 1000)]);
      // Markers both ways: A's notifications reach B, and A's own come back to A, in commit order,
      // so anything A sent about partition 1 came before them.
      dirA.offer([entry('marker-a', 2, now)]);
      dirB.offer([entry('marker', 0, now)]);
      await until(() => told.some((t) => t.to === 'A/partition-0') && told.filter((t) => t.to === 'B/partition-2').length >= 2);
      // Partition 1 is A's (the fake routers overlap there): A's owner took 'mine', and no wake went out for it.
      expect(told.filter((t) => t.to === 'B/partition-1')).to.have.length(0);
      expect(told.filter((t) => t.to === 'A/partition-1')).to.have.length(1); // the local offer only
    });

    it('a cancel on A reaches the dispatcher on B as an abort of that attempt, and A only locally', async () => {
      dirA.abort('task-42', 3);
      await until(() => told.some((t) => t.to === 'B/dispatcher'));
      expect(told.find((t) => t.to === 'B/dispatcher')).to.deep.include({ msg: 'abort', body: { taskId: 'task-42', attempt: 3 } });
      dirB.abort('marker', 1);
      await until(() => told.filter((t) => t.to === 'A/dispatcher').length >= 2);
      expect(told.filter((t) => t.to === 'A/dispatcher').map((t) => t.body)).to.deep.equal([
        { taskId: 'task-42', attempt: 3 }, // the local abort
        { taskId: 'marker', attempt: 1 },
      ]);
    });

    it("pull traffic: A's demand and its withdrawal reach B's dispatcher; B's grant reaches A's only, in parts when large", async () => {
      dirA.peerNotifier?.pullDemand({ waiterId: 'w-1', queue: 'jobs', max: 5, waitMs: 20_000 });
      dirA.peerNotifier?.pullWithdraw('w-1');
      await until(() => told.filter((t) => t.to === 'B/dispatcher').length >= 2);
      expect(told.filter((t) => t.to === 'B/dispatcher').map((t) => [t.msg, t.body])).to.deep.equal([
        ['remotePull', { kind: 'demand', from: 'node-a', demand: { waiterId: 'w-1', queue: 'jobs', max: 5, waitMs: 20_000 } }],
        ['remotePull', { kind: 'withdraw', from: 'node-a', waiterId: 'w-1' }],
      ]);
      const grants = Array.from({ length: 200 }, (_, i) => ({ entry: { ...entry(`g-${i}`, 2, 1), queue: 'jobs' }, epoch: 4 }));
      dirB.peerNotifier?.pullGrant('node-a', 'w-1', 'jobs', grants);
      dirB.peerNotifier?.pullGrant('node-c', 'w-2', 'jobs', grants.slice(0, 1)); // another node's: A drops it
      dirB.abort('marker', 1); // sent after both grants: once it is here, so is what A was to get
      await until(() => told.some((t) => t.to === 'A/dispatcher' && t.msg === 'abort'));
      const got = told
        .filter((t) => t.to === 'A/dispatcher' && t.msg === 'remotePull')
        .map((t) => t.body as { waiterId: string; grants: unknown[] });
      expect(got.length).to.be.greaterThan(1);
      expect(got.every((m) => m.waiterId === 'w-1')).to.equal(true);
      expect(got.flatMap((m) => m.grants)).to.deep.equal(grants);
    });

    it('a wake of 2,000 entries (34 notifications) arrives whole, in order', async () => {
      const now = Date.now();
      const entries = Array.from({ length: 2000 }, (_, i) => entry(`bulk-${i}`, 2, now + i));
      dirA.offer(entries);
      const received = () => told.filter((t) => t.to === 'B/partition-2').flatMap((t) => t.body as DueEntry[]);
      await until(() => received().length >= entries.length);
      expect(received()).to.deep.equal(entries);
      expect(told.filter((t) => t.to === 'B/partition-2').length).to.equal(34); // one offer per notification
    });

    it('task ends recorded on A are announced on B, never echoed back to A', async () => {
      const eventsA = new TaskEndEvents();
      const eventsB = new TaskEndEvents();
      relayTaskEnds(nodeA.bus, eventsA);
      relayTaskEnds(nodeB.bus, eventsB);
      const seenA: TaskEnds[] = [];
      const seenB: TaskEnds[] = [];
      eventsA.subscribe((e) => seenA.push(e));
      const onB = new Promise<void>((resolve) => eventsB.subscribe((e) => (seenB.push(e), resolve())));
      eventsA.publish({ taskIds: ['t-1', 't-2'], workflowIds: ['w-1'] });
      await onB;
      expect(seenB).to.deep.equal([{ taskIds: ['t-1', 't-2'], workflowIds: ['w-1'], fromPeer: true }]);
      const marker = new Promise<void>((resolve) => eventsA.subscribe((e) => e.taskIds[0] === 'marker' && resolve()));
      eventsB.publish({ taskIds: ['marker'] });
      await marker;
      expect(seenA.map((e) => [e.taskIds[0], e.fromPeer === true])).to.deep.equal([
        ['t-1', false],
        ['marker', true],
      ]);
    });

    it('nodes of another schema on the same database hear nothing of these', async () => {
      const otherSchema = freshSchema('other');
      const nodeC = await startPgCoordination({ url, schema: otherSchema, base: new SystemClock(), log, nodeId: 'node-c' });
      const nodeD = await startPgCoordination({ url, schema: otherSchema, base: new SystemClock(), log, nodeId: 'node-d' });
      try {
        await attachPeers(nodeC, fakeRouter('C', [0, 1, 2], told, onTold), horizonMs);
        expect(await nodeA.bus.publish('cancel', { taskId: 'not-for-c', attempt: 1 })).to.equal(1);
        expect(await nodeA.bus.publish('wake', { partition: 2, entries: [entry('not-for-c', 2, Date.now())] })).to.equal(1);
        // Committed after A's: a session receives notifications in commit order, so once C has
        // D's marker, anything of A's that C could have heard came before it.
        expect(await nodeD.bus.publish('cancel', { taskId: 'marker-d', attempt: 1 })).to.equal(1);
        await until(() => told.some((t) => t.to === 'C/dispatcher'));
        expect(told.filter((t) => t.to.startsWith('C/')).map((t) => t.body)).to.deep.equal([{ taskId: 'marker-d', attempt: 1 }]);
        await until(() => told.some((t) => t.to === 'B/partition-2') && told.some((t) => t.to === 'B/dispatcher'));
      } finally {
        await Promise.all([nodeC.close(), nodeD.close()]);
      }
    });

    it('after its backend is terminated (pg_terminate_backend), B reconnects, LISTENs again and hears what follows', async () => {
      const pid = nodeB.listener.backendPid;
      expect(pid).to.be.a('number');
      const down = new Promise<void>((resolve) => nodeB.listener.onChange((up) => up || resolve()));
      const back = new Promise<void>((resolve) => nodeB.listener.onChange((up) => up && resolve()));
      const admin = new Client({ connectionString: url });
      await admin.connect();
      try {
        const { rows } = await admin.query<{ done: boolean }>('SELECT pg_terminate_backend($1) AS done', [pid]);
        expect(rows[0].done).to.equal(true);
      } finally {
        await admin.end();
      }
      await down;
      expect(nodeB.status()).to.equal('down');
      // Published on B while it is down: dropped and counted, never thrown.
      expect(await nodeB.bus.publish('cancel', { taskId: 'while-down', attempt: 1 })).to.equal(0);
      await back;
      expect(nodeB.status()).to.equal('up');
      expect(nodeB.listener.backendPid).to.not.equal(pid);
      dirA.abort('after-reconnect', 5);
      dirA.offer([entry('after-reconnect', 2, Date.now())]);
      await until(() => told.some((t) => t.to === 'B/dispatcher') && told.some((t) => t.to === 'B/partition-2'));
      expect(told.find((t) => t.to === 'B/dispatcher')?.body).to.deep.equal({ taskId: 'after-reconnect', attempt: 5 });
      // And B publishes again: A hears it.
      dirB.abort('from-b-again', 2);
      await until(() => told.some((t) => t.to === 'A/dispatcher' && (t.body as { taskId: string }).taskId === 'from-b-again'));
      const text = await registryB.metrics();
      expect(text).to.match(/scheduler_postgres_listen_up 1/);
      expect(text).to.match(/scheduler_postgres_messages_total\{channel="cancel",direction="dropped"\} 1/);
    });
  });

  describe('PostgreSQL database clock (clock_timestamp(), real server)', () => {
    for (const shiftMs of [0, 90_000, -3_600_000]) {
      it(`a node whose clock is off by ${shiftMs} ms reads the database's clock, never ahead of it`, async () => {
        const registry = new Registry();
        const c = await startPgCoordination({ url, base: new ShiftedClock(shiftMs), log, registry, schema: freshSchema('clock') });
        const probe = new Client({ connectionString: url });
        await probe.connect();
        try {
          expect(c.clock.isSynced).to.equal(true);
          expect(c.clock.correctionMs).to.be.closeTo(-shiftMs, 50); // same machine: the true offset is −shift
          for (let i = 0; i < 20; i++) {
            const read = c.clock.now();
            // The server reads its clock after ours was read.
            const { rows } = await probe.query<{ ms: number }>('SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS ms');
            expect(read).to.be.at.most(rows[0].ms);
          }
          const text = await registry.metrics();
          expect(text).to.match(/scheduler_postgres_clock_round_trip_seconds \d/);
          expect(text).to.match(/scheduler_postgres_clock_samples_total\{result="ok"\} 4/);
        } finally {
          await probe.end();
          await c.close();
        }
      });
    }

    it('a statement unanswered past the query timeout drops the connection, which is remade', async () => {
      const c = await startPgCoordination({
        url,
        base: new SystemClock(),
        log,
        schema: freshSchema('slow'),
        connection: { queryTimeoutMs: 300 },
      });
      try {
        const pid = c.listener.backendPid;
        const back = new Promise<void>((resolve) => c.listener.onChange((up) => up && resolve()));
        // The server holds the statement for 5 s: a stand-in for a connection that stopped answering.
        await c.listener.query('SELECT pg_sleep(5)').then(
          () => expect.fail('the statement should time out'),
          (err: Error) => expect(err.message).to.match(/unanswered after 300 ms/),
        );
        await back;
        expect(c.status()).to.equal('up');
        expect(c.listener.backendPid).to.be.a('number').and.not.equal(pid);
        expect(await c.bus.publish('cancel', { taskId: 't', attempt: 1 })).to.equal(1);
      } finally {
        await c.close();
      }
    });

    it("the connection's timeouts run on real time: moving a manual base clock past them drops nothing", async () => {
      const base = new ManualClock(Date.now());
      const c = await startPgCoordination({
        url,
        base,
        log,
        schema: freshSchema('manual'),
      });
      try {
        const pid = c.listener.backendPid;
        const drops: boolean[] = [];
        c.listener.onChange((up) => drops.push(up));
        const slow = c.listener.query('SELECT pg_sleep(0.1) AS slept');
        base.advance(60_000); // far past the 5 s statement timeout, on the manual clock only
        expect((await slow).rows).to.have.length(1);
        expect(drops).to.deep.equal([]);
        expect(c.listener.backendPid).to.equal(pid);
      } finally {
        await c.close();
      }
    });

    it('an unreachable database does not stop start-up: the local clock, status down, and it keeps retrying', async () => {
      const c = await startPgCoordination({
        url: 'postgres://scheduler@127.0.0.1:1/none',
        base: new SystemClock(),
        log,
        connection: { connectTimeoutMs: 500 },
      });
      try {
        expect(c.status()).to.equal('down');
        expect(c.clock.isSynced).to.equal(false);
        expect(await c.bus.publish('cancel', { taskId: 't', attempt: 1 })).to.equal(0);
      } finally {
        await c.close();
      }
    });
  });
}
