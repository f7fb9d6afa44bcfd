/**
 * Cluster mode on one MongoDB database (FerretDB in CI) and, as a second suite, one PostgreSQL
 * schema (test/helpers/cluster-store.ts): two schedulers in this process share the
 * partitions through leases. Checks that the second member gets its rendezvous share by hand-over
 * (disjoint, complete), that tasks submitted on either member all run exactly once, that each
 * member runs some, and that a member leaving hands its partitions back at once. Skipped without
 * the chosen store's server.
 */
import { expect } from 'chai';
import path from 'node:path';
import pino from 'pino';
import { startScheduler, Scheduler } from '../../src/bootstrap';
import { loadConfig } from '../../src/config';
import { partitionsFor } from '../../src/domain/rendezvous';
import { ClusterDatabase, describeEachClusterStore, freshClusterDatabase } from '../helpers/cluster-store';

const PARTITIONS = 8;

/** Polls `check` until it returns a value (bounded): waits for a state, not for time. */
async function until<T>(what: string, check: () => Promise<T | null | undefined> | T | null | undefined, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== null && v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`not reached: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Starts a member of `db`'s cluster in this process (8 partitions, one worker), recorded in `started`. */
async function startMember(
  db: ClusterDatabase,
  started: Scheduler[],
  memberId: string,
  leaseTtlMs: number,
  env: Record<string, string> = {},
): Promise<Scheduler> {
  const config = loadConfig({
    configDir: path.resolve(__dirname, '..', '..', '..', 'config'),
    env,
    overrides: {
      ...db.config,
      memberId,
      partitions: PARTITIONS,
      leaseTtlMs,
      horizonMs: 1000,
      workers: 1,
      logLevel: 'silent',
      shutdownGraceMs: 5000,
    },
  });
  const s = await startScheduler(config, { logger: pino({ level: 'silent' }) });
  started.push(s);
  return s;
}

describeEachClusterStore('cluster mode: two schedulers share the partitions of one database through leases', function (store) {
  this.timeout(90_000);
  const db = freshClusterDatabase('cluster', store);
  const started: Scheduler[] = [];

  // Long enough that a loaded CI machine (a FerretDB write can take a second) renews in time.
  const start = (memberId: string) => startMember(db, started, memberId, 4500);

  const owned = (s: Scheduler) => s.runtime.router.ownership()?.owned ?? [];

  after(async () => {
    for (const s of started) await s.close().catch(() => undefined);
    await db.drop();
  });

  let a: Scheduler;
  let b: Scheduler;

  it('the first member owns every partition; /readyz says so', async () => {
    a = await start('member-a');
    expect(owned(a)).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7]);
    const r = await a.app.inject({ method: 'GET', url: '/readyz' });
    expect(r.statusCode).to.equal(200);
    expect(r.json()).to.deep.include({ status: 'ready', partitions: { owned: 8, fencing: 0, total: 8 } });
  });

  it('a second member gets its rendezvous share by hand-over: disjoint and complete', async () => {
    const before = new Map((await a.store.listLeases()).map((l) => [l.partition, l.epoch]));
    b = await start('member-b');
    const share = partitionsFor('member-b', ['member-a'], PARTITIONS);
    expect(share.length).to.be.within(1, PARTITIONS - 1);
    await until('hand-over', () => JSON.stringify(owned(b)) === JSON.stringify(share));
    await until('a keeps the rest', () => owned(a).length === PARTITIONS - share.length);
    expect([...owned(a), ...owned(b)].sort()).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7]);
    const leases = await a.store.listLeases();
    for (const l of leases) expect(l.owner).to.equal(share.includes(l.partition) ? 'member-b' : 'member-a');
    for (const l of leases.filter((x) => share.includes(x.partition))) {
      expect(l.epoch, `partition ${l.partition}`).to.be.greaterThan(before.get(l.partition) ?? 0);
    }
  });

  it('tasks submitted on either member run exactly once, some on each member', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 24; i++) {
      const via = i % 2 === 0 ? a : b;
      ids.push((await via.service.submit({ task_type: 'echo', payload: { i } })).task_id);
    }
    for (const id of ids) {
      const t = await until(`task ${id} done`, async () => {
        const x = await a.service.get(id, { attempts: true });
        return x.status === 'SUCCEEDED' ? x : null;
      });
      expect(t).to.include({ attempts: 1 });
    }
    const completed = async (s: Scheduler) => {
      const text = (await s.app.inject({ method: 'GET', url: '/metrics' })).body;
      return Number(/^scheduler_tasks_completed_total\{[^}]*status="SUCCEEDED"[^}]*\} (\d+)/m.exec(text)?.[1] ?? 0);
    };
    // A node counts a completion when the store's answer reaches its dispatcher, which can come
    // after the end is visible to a read: wait for the counts (a stray extra count still fails).
    const [na, nb] = await until('24 completions counted', async () => {
      const counts = [await completed(a), await completed(b)];
      return counts[0] + counts[1] >= 24 ? counts : null;
    });
    expect(na + nb).to.equal(24);
    expect(na).to.be.greaterThan(0);
    expect(nb).to.be.greaterThan(0);
  });

  it('a member that leaves releases its leases; the other takes them at its next round (new epoch)', async () => {
    const share = owned(b);
    // The epochs b holds now: under load a lease can lapse and be taken again before this point,
    // so the hand-back is checked as "a higher epoch than b's", not as one fixed number.
    const before = new Map((await a.store.listLeases()).map((l) => [l.partition, l.epoch]));
    await b.close();
    expect((await a.store.listLiveMembers(Date.now())).map((m) => m.memberId)).to.deep.equal(['member-a']);
    await until('a owns all again', () => owned(a).length === PARTITIONS, 15_000);
    const leases = await a.store.listLeases();
    for (const l of leases.filter((x) => share.includes(x.partition))) {
      expect(l.owner, `partition ${l.partition}`).to.equal('member-a');
      expect(l.epoch, `partition ${l.partition}`).to.be.greaterThan(before.get(l.partition) ?? 0);
    }
    const { task_id } = await a.service.submit({ task_type: 'echo', payload: 'after' });
    await until('task after leave', async () => (await a.service.get(task_id)).status === 'SUCCEEDED');
  });
});

describeEachClusterStore(
  "cluster mode: a joiner's share moves at once, announced on the bus, not at the members' next rounds",
  function (store) {
    this.timeout(60_000);
    const db = freshClusterDatabase('cluster_join', store);
    const started: Scheduler[] = [];
    // MongoDB has no bus of its own: its members talk over Redis. PostgreSQL uses LISTEN/NOTIFY here.
    const redisUrl = store === 'mongodb' ? process.env.REDIS_URL : undefined;

    after(async () => {
      for (const s of started) await s.close().catch(() => undefined);
      await db.drop();
    });

    async function start(memberId: string): Promise<Scheduler> {
      if (store === 'mongodb' && !redisUrl) throw new Error('REDIS_URL is needed: the bus of a MongoDB cluster');
      // Rounds every 20 s: a hand-over that waited for the rounds would take 20 s or more.
      return startMember(db, started, memberId, 60_000, redisUrl ? { REDIS_URL: redisUrl } : {});
    }

    it('the owner hands over as soon as the joiner says it joined, and the joiner takes its share as soon as the owner says it released it', async () => {
      const a = await start('join-a');
      const b = await start('join-b');
      const share = partitionsFor('join-b', ['join-a'], PARTITIONS);
      const owned = (s: Scheduler) => s.runtime.router.ownership()?.owned ?? [];
      // Well within the 20 s until either member's next round.
      await until('hand-over', () => JSON.stringify(owned(b)) === JSON.stringify(share), 12_000);
      await until('a keeps the rest', () => owned(a).length === PARTITIONS - share.length, 12_000);
    });
  },
);
