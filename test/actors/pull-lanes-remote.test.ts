import { expect } from 'chai';
import type { SchedulerDeps } from '../../src/actors/deps';
import { PullLanes } from '../../src/actors/dispatcher/pull-lanes';
import { DEMAND_RENEW_MS, REMOTE_DEMAND_MS, SHORT_POLL_ASK_MS } from '../../src/actors/dispatcher/pull-waiters';
import type { RemotePullDemand } from '../../src/actors/protocol';
import type { PullGrant } from '../../src/cluster/messages';
import { PartitionFences } from '../../src/cluster/partition-fences';
import { ManualClock } from '../../src/domain/clock';
import { externalQueueSpecs } from '../../src/domain/external-queues';
import type { DueEntry } from '../../src/domain/task';
import type { LeasedAttempt } from '../../src/services/ports';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store';
import { actorDeps, routerWith, settle, waitingTask } from '../helpers/actor-deps';

const T0 = Date.UTC(2026, 5, 1, 12, 0, 0);

function entry(id: string): DueEntry {
  return { id, partition: 0, seq: 1, dueAt: T0, priority: 'medium', tenantId: 't', taskType: 'noop', state: 'PENDING', queue: 'jobs' };
}

/** What this node told the other nodes. */
class RecordingPeers {
  demands: RemotePullDemand[] = [];
  withdrawn: string[] = [];
  grants: Array<{ to: string; waiterId: string; queue: string; grants: PullGrant[] }> = [];
  offered: string[] = [];
  offeredEntries(entries: readonly DueEntry[]): void {
    this.offered.push(...entries.map((e) => e.id));
  }
  abort(): void {}
  left(): void {}
  cronChanged(): void {}
  pullDemand(d: RemotePullDemand): void {
    this.demands.push(d);
  }
  pullWithdraw(waiterId: string): void {
    this.withdrawn.push(waiterId);
  }
  pullGrant(to: string, waiterId: string, queue: string, grants: PullGrant[]): void {
    this.grants.push({ to, waiterId, queue, grants });
  }
}

/**
 * Pull queues across the nodes of a cluster (docs/CLUSTER.md "Pull queues"): a lease request with
 * nothing ready here asks the other nodes; an owner serves another node's demand by granting
 * tasks it took from its ready queues (unclaimed, with its fencing tokens); the asking node claims
 * them for its request and gives back what it cannot take. Driven on a manual clock, peers
 * recorded, no bus: who gets what is decided by the order of calls.
 */
describe('PullLanes: lease requests served across the nodes of a cluster', () => {
  let store: SqliteStore;
  let clock: ManualClock;
  let lanes: PullLanes;
  let peers: RecordingPeers;
  let limits: SchedulerDeps['limits'];

  /** This node holds partition 0 (epoch 7) of `partitions`; the others' owners are elsewhere. */
  function build(partitions: number): void {
    const router = routerWith();
    router.setPeers({
      offered: (e: readonly DueEntry[]) => peers.offeredEntries(e),
      abort: () => undefined,
      left: () => undefined,
      cronChanged: () => undefined,
      pullDemand: (d: RemotePullDemand) => peers.pullDemand(d),
      pullWithdraw: (id: string) => peers.pullWithdraw(id),
      pullGrant: (to: string, waiterId: string, queue: string, g: PullGrant[]) => peers.pullGrant(to, waiterId, queue, g),
    });
    const fences = new PartitionFences();
    fences.grant(0, 7);
    const deps = actorDeps({
      store,
      clock,
      router,
      fences,
      overrides: { partitions, externalQueues: { jobs: { transport: 'http', leaseMs: 5000, maxInFlight: 3 } } },
    });
    limits = deps.limits;
    lanes = new PullLanes(deps, externalQueueSpecs(deps.config).values(), {
      record: async (c) => {
        lanes.settled(c);
        return null;
      },
      pump: () => lanes.pump(clock.now()),
      cancel: () => undefined,
    });
  }

  beforeEach(async () => {
    store = new SqliteStore(':memory:');
    await store.open(1);
    clock = new ManualClock(T0);
    peers = new RecordingPeers();
    build(1);
  });
  afterEach(async () => {
    lanes.close();
    await store.close();
  });

  async function stored(...ids: string[]): Promise<void> {
    await store.insertTasks(ids.map((id) => waitingTask(id, T0, T0, { state: 'PENDING', queue: 'jobs' })));
  }

  it('a request with nothing ready here asks the other nodes; their grant is claimed for it with their tokens, the rest goes back', async () => {
    await stored('a', 'b', 'c');
    let answer: LeasedAttempt[] | undefined;
    void lanes.lease({ waiterId: 'w1', queue: 'jobs', workerId: 'host-1', max: 2, waitMs: 10_000 }).then((r) => (answer = r));
    expect(peers.demands).to.deep.equal([{ waiterId: 'w1', queue: 'jobs', max: 2, waitMs: REMOTE_DEMAND_MS }]);
    clock.advance(1000);
    const grants = ['a', 'b', 'c'].map((id) => ({ entry: entry(id), epoch: 7 }));
    lanes.remote({ kind: 'granted', from: 'n2', waiterId: 'w1', queue: 'jobs', grants });
    await settle();
    expect(answer?.map((a) => [a.task.id, a.task.attempt])).to.deep.equal([
      ['a', 1],
      ['b', 1],
    ]);
    expect(await store.getTask('a')).to.deep.include({ state: 'RUNNING', workerId: 'http:host-1' });
    expect(peers.offered).to.deep.equal(['c']); // more than the request takes: back to its owner, as a wake
    expect((await store.getTask('c'))?.state).to.equal('PENDING');
    expect(peers.withdrawn).to.deep.equal(['w1']); // answered: the other owners drop its demand
    expect(lanes.stats()[0]).to.deep.include({ inFlight: 2, waiting: 0 });
  });

  it('a request served here asks nobody; a grant for a request no longer waiting goes back whole', async () => {
    await stored('a', 'b');
    lanes.add(entry('a'));
    const got = await lanes.lease({ waiterId: 'w1', queue: 'jobs', workerId: 'h', max: 1, waitMs: 10_000 });
    expect(got.map((a) => a.task.id)).to.deep.equal(['a']);
    expect(peers.demands).to.deep.equal([]);
    expect(peers.withdrawn).to.deep.equal([]);
    lanes.remote({ kind: 'granted', from: 'n2', waiterId: 'w1', queue: 'jobs', grants: [{ entry: entry('b'), epoch: 7 }] });
    await settle();
    expect(peers.offered).to.deep.equal(['b']);
    expect((await store.getTask('b'))?.state).to.equal('PENDING');
  });

  it('a grant whose token is no longer current claims nothing: the request waits on and asks again for the rest of its wait', async () => {
    await store.insertTasks([waitingTask('a', T0, T0, { queue: 'jobs' })]);
    expect(await store.markPending(['a'], T0, 9)).to.deep.equal(['a']); // a newer owner (epoch 9) fenced the task's partition
    void lanes.lease({ waiterId: 'w1', queue: 'jobs', workerId: 'h', max: 1, waitMs: 10_000 });
    clock.advance(1000);
    lanes.remote({ kind: 'granted', from: 'n2', waiterId: 'w1', queue: 'jobs', grants: [{ entry: entry('a'), epoch: 7 }] });
    await settle();
    expect((await store.getTask('a'))?.state).to.equal('PENDING');
    expect(lanes.stats()[0]).to.deep.include({ waiting: 1, inFlight: 0 });
    expect(peers.demands).to.have.length(2); // at the request, and again after the refused grant
    expect(peers.offered).to.deep.equal(['a']); // refused: back to its owner (here a wake)
  });

  it('a waiting request sends its demand again every 1.5 s, each for 2 s, until its wait ends; then withdraws it', async () => {
    let answer: LeasedAttempt[] | undefined;
    void lanes.lease({ waiterId: 'w1', queue: 'jobs', workerId: 'h', max: 1, waitMs: 5000 }).then((r) => (answer = r));
    for (let i = 0; i < 3; i++) clock.advance(DEMAND_RENEW_MS); // at 1.5, 3 and 4.5 s
    expect(peers.demands.map((d) => d.waitMs)).to.deep.equal([2000, 2000, 2000, 500]);
    await settle();
    expect(answer).to.equal(undefined);
    clock.advance(500);
    await settle();
    expect(answer).to.deep.equal([]);
    expect(peers.withdrawn).to.deep.equal(['w1']);
    clock.advance(10_000);
    expect(peers.demands).to.have.length(4);
  });

  it("another node's demand is served for 2 s at most unless sent again (its node may have died)", async () => {
    lanes.remote({ kind: 'demand', from: 'n2', demand: { waiterId: 'r1', queue: 'jobs', max: 1, waitMs: 30_000 } });
    clock.advance(DEMAND_RENEW_MS);
    lanes.remote({ kind: 'demand', from: 'n2', demand: { waiterId: 'r1', queue: 'jobs', max: 1, waitMs: 28_500 } }); // renewed
    clock.advance(REMOTE_DEMAND_MS - 1);
    expect(lanes.stats()[0]).to.deep.include({ waiting: 1 });
    clock.advance(1); // not renewed again: gone
    expect(lanes.stats()[0]).to.deep.include({ waiting: 0 });
    await stored('a');
    lanes.add(entry('a'));
    lanes.pump(clock.now());
    expect(peers.grants).to.deep.equal([]);
  });

  it("another node's demand waits here in line: what becomes ready is granted to it unclaimed, with this node's tokens", async () => {
    lanes.remote({ kind: 'demand', from: 'n2', demand: { waiterId: 'r1', queue: 'jobs', max: 2, waitMs: 10_000 } });
    expect(lanes.stats()[0]).to.deep.include({ waiting: 1 });
    await stored('a', 'b', 'c');
    for (const id of ['a', 'b', 'c']) lanes.add(entry(id));
    lanes.pump(clock.now());
    expect(peers.grants).to.have.length(1);
    expect(peers.grants[0]).to.deep.include({ to: 'n2', waiterId: 'r1', queue: 'jobs' });
    expect(peers.grants[0].grants.map((g) => [g.entry.id, g.epoch])).to.deep.equal([
      ['a', 7],
      ['b', 7],
    ]);
    expect((await store.getTask('a'))?.state).to.equal('PENDING'); // the asking node claims it
    expect(lanes.stats()[0]).to.deep.include({ ready: 1, inFlight: 0, waiting: 0 });
  });

  it("another node's demand is dropped when withdrawn or when its wait ends; with no wait it is not taken", async () => {
    lanes.remote({ kind: 'demand', from: 'n2', demand: { waiterId: 'r1', queue: 'jobs', max: 1, waitMs: 10_000 } });
    lanes.remote({ kind: 'demand', from: 'n3', demand: { waiterId: 'r1', queue: 'jobs', max: 1, waitMs: 5000 } });
    lanes.remote({ kind: 'demand', from: 'n4', demand: { waiterId: 'r1', queue: 'jobs', max: 1, waitMs: 0 } });
    lanes.remote({ kind: 'demand', from: 'n4', demand: { waiterId: 'r2', queue: 'other', max: 1, waitMs: 5000 } });
    expect(lanes.stats()[0]).to.deep.include({ waiting: 2 });
    lanes.remote({ kind: 'withdraw', from: 'n2', waiterId: 'r1' });
    clock.advance(5000);
    await settle();
    expect(lanes.stats()[0]).to.deep.include({ waiting: 0 });
    await stored('a');
    lanes.add(entry('a'));
    lanes.pump(clock.now());
    expect(peers.grants).to.deep.equal([]);
  });

  it('a request with no wait and nothing ready here asks the other members for 200 ms: their grant is claimed for it', async () => {
    lanes.close();
    build(2); // partition 1 is owned elsewhere
    await stored('a');
    let answer: LeasedAttempt[] | undefined;
    void lanes.lease({ waiterId: 'w1', queue: 'jobs', workerId: 'h', max: 1, waitMs: 0 }).then((r) => (answer = r));
    expect(peers.demands).to.deep.equal([{ waiterId: 'w1', queue: 'jobs', max: 1, waitMs: SHORT_POLL_ASK_MS }]);
    await settle();
    expect(answer).to.equal(undefined);
    clock.advance(5);
    lanes.remote({ kind: 'granted', from: 'n2', waiterId: 'w1', queue: 'jobs', grants: [{ entry: entry('a'), epoch: 7 }] });
    await settle();
    expect(answer?.map((a) => a.task.id)).to.deep.equal(['a']);
    expect(peers.withdrawn).to.deep.equal(['w1']);
  });

  it('a request with no wait that the other members grant nothing gets [] after 200 ms, and its demand is withdrawn', async () => {
    lanes.close();
    build(2);
    let answer: LeasedAttempt[] | undefined;
    void lanes.lease({ waiterId: 'w1', queue: 'jobs', workerId: 'h', max: 1, waitMs: 0 }).then((r) => (answer = r));
    clock.advance(SHORT_POLL_ASK_MS - 1);
    await settle();
    expect(answer).to.equal(undefined);
    clock.advance(1);
    await settle();
    expect(answer).to.deep.equal([]);
    expect(peers.demands).to.have.length(1); // not renewed
    expect(peers.withdrawn).to.deep.equal(['w1']);
    expect(lanes.stats()[0]).to.deep.include({ waiting: 0 });
  });

  it('a request with no wait asks nobody when this node holds every partition, or when its queue has no room here', async () => {
    let answer: LeasedAttempt[] | undefined;
    await lanes.lease({ waiterId: 'w1', queue: 'jobs', workerId: 'h', max: 1, waitMs: 0 }).then((r) => (answer = r));
    expect(answer).to.deep.equal([]);
    lanes.close();
    build(2);
    await stored('a', 'b', 'c');
    for (const id of ['a', 'b', 'c']) lanes.add(entry(id));
    const got = await lanes.lease({ waiterId: 'w2', queue: 'jobs', workerId: 'h', max: 3, waitMs: 0 }); // maxInFlight 3, all out
    expect(got).to.have.length(3);
    expect(await lanes.lease({ waiterId: 'w3', queue: 'jobs', workerId: 'h', max: 1, waitMs: 0 })).to.deep.equal([]);
    expect(peers.demands).to.deep.equal([]);
  });

  it("a task granted to another node's request that comes back unclaimed gets its rate-limit token back; a later retry of it does not", async () => {
    limits.setTenantLimit('t', { ratePerSecond: 1, burst: 1 }, T0);
    await stored('a', 'b');
    lanes.add(entry('a'));
    lanes.add(entry('b'));
    const demand = (waiterId: string) =>
      lanes.remote({ kind: 'demand', from: 'n2', demand: { waiterId, queue: 'jobs', max: 1, waitMs: 10_000 } });
    demand('r1');
    expect(peers.grants.map((g) => g.grants.map((x) => x.entry.id))).to.deep.equal([['a']]);
    demand('r2');
    expect(peers.grants).to.have.length(1); // the tenant's one token a second is used up
    lanes.add(entry('a')); // given back by n2 (its request was answered by another member)
    lanes.pump(clock.now());
    // its token came back: b, first in line now, is granted at once
    expect(peers.grants.map((g) => g.grants.map((x) => x.entry.id))).to.deep.equal([['a'], ['b']]);
    lanes.add({ ...entry('b'), state: 'RETRYING', dueAt: T0 + 500 }); // b claimed there, run, failed: its retry gives no token back
    demand('r3');
    expect(peers.grants).to.have.length(2);
    clock.advance(1000);
    lanes.pump(clock.now());
    expect(peers.grants).to.have.length(3);
  });
});
