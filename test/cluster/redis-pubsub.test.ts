import { expect } from 'chai';
import pino from 'pino';
import { Registry } from 'prom-client';
import type { ActorRouter } from '../../src/actors/router';
import { routerWith } from '../helpers/actor-deps';
import { attachPeers, relayTaskEnds } from '../../src/actors/peers';
import { TaskEndEvents } from '../../src/services/task-end-events';
import type { TaskEnds } from '../../src/services/ports';
import { Coordination, startCoordination } from '../../src/cluster/redis/coordination';
import { SystemClock } from '../../src/domain/clock';
import type { DueEntry } from '../../src/domain/task';
import { NEEDS_REDIS, REDIS_URL, redisClient, testPrefix } from '../helpers/redis';

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

if (!REDIS_URL) {
  describe('Redis pub/sub coordination', () => {
    it.skip(NEEDS_REDIS, () => undefined);
  });
} else {
  const url = REDIS_URL;
  describe('Redis pub/sub coordination (wake a partition owner, deliver a cancel)', () => {
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
    let nodeA: Coordination;
    let nodeB: Coordination;
    let dirA: ActorRouter;
    let dirB: ActorRouter;
    const registryB = new Registry();
    const prefix = testPrefix();
    const horizonMs = 30_000;

    before(async () => {
      const log = pino({ level: 'silent' });
      nodeA = await startCoordination({ url, base: new SystemClock(), log, nodeId: 'node-a', prefix });
      nodeB = await startCoordination({ url, base: new SystemClock(), log, nodeId: 'node-b', prefix, registry: registryB });
      dirA = fakeRouter('A', [0, 1], told, onTold);
      dirB = fakeRouter('B', [1, 2], told, onTold); // B owns 1 and 2, not 0
      await attachPeers(nodeA, dirA, horizonMs);
      await attachPeers(nodeB, dirB, horizonMs);
    });
    after(async () => {
      await Promise.all([nodeA.close(), nodeB.close()]);
    });
    beforeEach(() => told.splice(0));

    it('a task due inside the horizon, stored on A, wakes the owner of its partition on B; later ones are left to window reads', async () => {
      const now = Date.now();
      dirA.offer([entry('soon', 2, now + 1000), entry('later', 2, now + horizonMs + 60_000), entry('mine', 1, now)]);
      await until(() => told.some((t) => t.to === 'B/partition-2'));
      expect(told.find((t) => t.to === 'B/partition-2')?.body).to.deep.equal([entry('soon', 2, now + 1000)]);
      // A marker after it (one connection publishes in order): anything A sent about partition 1 came before.
      dirA.offer([entry('marker', 2, now)]);
      await until(() => told.filter((t) => t.to === 'B/partition-2').length >= 2);
      // Partition 1 is A's (the fake routers overlap there): A's owner took 'mine', and no wake went out for it.
      expect(told.filter((t) => t.to === 'B/partition-1')).to.have.length(0);
      expect(told.filter((t) => t.to === 'A/partition-1')).to.have.length(1);
    });

    it('a wake for a partition this node does not own is ignored', async () => {
      dirB.offer([entry('p0', 0, Date.now())]);
      await until(() => told.some((t) => t.to === 'A/partition-0'));
      await nodeA.bus.publish('wake', { partition: 0, entries: [entry('p0b', 0, Date.now())] });
      dirA.offer([entry('marker', 2, Date.now())]);
      await until(() => told.some((t) => t.to === 'B/partition-2'));
      expect(told.filter((t) => t.to.startsWith('B/partition-0'))).to.have.length(0);
    });

    it('a cancel on A reaches the dispatcher on B as an abort of that attempt', async () => {
      dirA.abort('task-42', 3);
      await until(() => told.some((t) => t.to === 'B/dispatcher'));
      expect(told.find((t) => t.to === 'B/dispatcher')).to.deep.include({ msg: 'abort', body: { taskId: 'task-42', attempt: 3 } });
      expect(told.filter((t) => t.to === 'A/dispatcher')).to.have.length(1); // the local abort
    });

    it('task ends recorded on A are announced on B (its ?wait= waiters wake), never echoed back to A', async () => {
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
      // A marker on A: once it comes back to B, anything A would have echoed came before it.
      const marker = new Promise<void>((resolve) => eventsB.subscribe((e) => e.taskIds[0] === 'marker' && resolve()));
      eventsA.publish({ taskIds: ['marker'] });
      await marker;
      expect(seenA.map((e) => e.taskIds[0])).to.deep.equal(['t-1', 'marker']);
      expect(
        seenA.every((e) => e.fromPeer !== true),
        'nothing came back to A',
      ).to.equal(true);
    });

    it('a scheduler with another prefix (another PostgreSQL schema, redisPrefixOf) on the same Redis hears none of these messages', async () => {
      const log = pino({ level: 'silent' });
      const nodeC = await startCoordination({ url, base: new SystemClock(), log, nodeId: 'node-c', prefix: `${prefix}other:` });
      try {
        const dirC = fakeRouter('C', [2], told, onTold);
        await attachPeers(nodeC, dirC, horizonMs);
        dirA.offer([entry('soon-2', 2, Date.now())]);
        dirA.abort('task-43', 1);
        // Both reach B; C, subscribed before they were sent, gets neither.
        await until(() => told.some((t) => t.to === 'B/dispatcher') && told.some((t) => t.to === 'B/partition-2'));
        expect(told.filter((t) => t.to.startsWith('C/'))).to.deep.equal([]);
      } finally {
        await nodeC.close();
      }
    });

    it('a malformed message is dropped and counted, and delivery goes on', async () => {
      const c = redisClient();
      try {
        await c.publish(`${prefix}wake`, '{not json');
        await c.publish(`${prefix}wake`, JSON.stringify({ from: 'x', partition: 2, entries: [{ id: 'e', partition: 9 }] }));
        await c.publish(`${prefix}cancel`, JSON.stringify({ from: 'x', taskId: 'ok', attempt: 1 }));
      } finally {
        await c.quit();
      }
      await until(() => told.some((t) => t.to === 'B/dispatcher'));
      expect(told.filter((t) => t.to === 'B/partition-2')).to.have.length(0);
      expect(await registryB.metrics()).to.match(/scheduler_redis_messages_total\{channel="wake",direction="invalid"\} 2/);
    });
  });
}
