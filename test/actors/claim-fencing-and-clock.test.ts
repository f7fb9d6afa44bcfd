import { expect } from 'chai';
import { returnToOwners } from '../../src/actors/dispatcher/claim-batch';
import { PartitionOwnerActor } from '../../src/actors/owner/partition-owner';
import { ManualClock } from '../../src/domain/clock';
import { ClaimedTask, DueEntry, NewTask } from '../../src/domain/task';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store';
import { PartitionFences } from '../../src/cluster/partition-fences';
import { ExternalLanes } from '../../src/actors/dispatcher/external-lanes';
import { externalQueueSpecs } from '../../src/domain/external-queues';
import type { StreamDispatch } from '../../src/actors/dispatcher/stream-dispatch';
import { actorDeps, settle, waitingTask, routerWith } from '../helpers/actor-deps';

const T0 = Date.UTC(2026, 5, 1, 12, 0, 0);

function scheduled(id: string, dueAt: number, queue = 'default'): NewTask {
  return waitingTask(id, dueAt, T0, { queue });
}

function entry(id: string, dueAt: number, queue = 'default'): DueEntry {
  return { id, partition: 0, seq: 1, dueAt, priority: 'medium', tenantId: 't', taskType: 'noop', state: 'SCHEDULED', queue };
}

/**
 * Claims of due tasks handed out before their due mark (the owner does not wait for it): they
 * carry the partition's fencing token on every path, and a task refused because the clock stepped
 * back since the hand-out goes back to its owner.
 */
describe('claims of due tasks handed out before their mark', () => {
  let store: SqliteStore;
  let clock: ManualClock;

  beforeEach(async () => {
    store = new SqliteStore(':memory:');
    await store.open(1);
    clock = new ManualClock(T0);
  });
  afterEach(async () => {
    await store.close();
  });

  it('returnToOwners: a refused entry the clock does not read as due goes back into its window; the rest are released', () => {
    const told: Array<[string, unknown]> = [];
    const router = routerWith({ owners: [{ tell: (topic: string, msg: unknown) => told.push([topic, msg]) } as never] });
    const now = T0 + 995;
    const early = entry('early', T0 + 1000); // handed out as SCHEDULED; the clock stepped back
    const pending = { ...entry('pending', T0 + 1000), state: 'PENDING' as const }; // marked: a refusal is final
    const gone = entry('gone', T0 + 900); // due by this clock too: cancelled or claimed elsewhere
    const won = entry('won', T0 + 1000);
    const refused = returnToOwners(router, [early, pending, gone, won], [{ id: 'won' } as ClaimedTask], now);
    expect(refused.map((e) => e.id)).to.deep.equal(['early', 'pending', 'gone']); // their tokens are given back
    expect(told).to.deep.equal([
      ['released', ['pending', 'gone', 'won']],
      ['offer', [early]],
    ]);
  });

  it('returnToOwners: when every entry was claimed, each owner gets one released message and nothing is refused', () => {
    const told: Array<[number, string, unknown]> = [];
    const owner = (p: number) => ({ tell: (topic: string, msg: unknown) => told.push([p, topic, msg]) }) as never;
    const router = routerWith({ owners: [owner(0), owner(1)] });
    const entries = [entry('a', T0), { ...entry('b', T0), partition: 1 }, entry('c', T0 + 2000)]; // c: SCHEDULED, later than now: claimed all the same
    const refused = returnToOwners(router, entries, [{ id: 'c' }, { id: 'a' }, { id: 'b' }] as ClaimedTask[], T0);
    expect(refused).to.deep.equal([]);
    expect(told).to.deep.equal([
      [0, 'released', ['a', 'c']],
      [1, 'released', ['b']],
    ]);
  });

  it('a clock stepping back between hand-out and claim: the refused task is handed out again once the clock passes its time', async () => {
    await store.insertTasks([scheduled('a', T0 + 1000)]);
    const handed: DueEntry[][] = [];
    const router = routerWith({ dispatcher: { tell: (_t: string, entries: DueEntry[]) => handed.push(entries) } as never, owners: [] });
    const owner = new PartitionOwnerActor(actorDeps({ store, clock, router, overrides: { partitions: 1 } }));
    owner.initialize({ getCustomParameters: () => ({ partition: 0 }) } as never);
    router.setOwner(0, { tell: (topic: string, msg: never) => (topic === 'offer' ? owner.offer(msg) : owner.released(msg)) } as never);
    await owner.start();
    await settle();
    clock.advance(1000);
    while (handed.length === 0) await Promise.resolve(); // the hand-out
    clock.set(T0 + 995); // the clock steps back before the dispatcher's claim
    const claimed = await store.claimTasks(['a'], 'w', clock.now(), 1000);
    expect(claimed).to.deep.equal([]); // the claim came first: SCHEDULED, not due by this clock
    returnToOwners(router, handed[0], claimed, clock.now());
    await settle();
    expect(owner.stats()).to.include({ windowSize: 1, outstanding: 0 });
    // No mark: it waits dueMarkDelayMs, and by then the task is back in its window, not held.
    expect((await store.getTask('a'))!.state).to.equal('SCHEDULED');
    clock.advance(5);
    await settle();
    expect(handed.map((h) => h.map((e) => e.id))).to.deep.equal([['a'], ['a']]);
    expect((await store.claimTasks(['a'], 'w', clock.now(), 1000)).map((t) => [t.id, t.startedAt])).to.deep.equal([['a', T0 + 1000]]);
    owner.stop();
  });

  it('an external queue claims with the fencing token: a partition fenced by a newer owner is left alone', async () => {
    await store.insertTasks([scheduled('x', T0 + 1000, 'ext')]);
    const fences = new PartitionFences();
    fences.grant(0, 1); // this member still believes it holds epoch 1
    await store.fencePartition(0, 2); // another member took the partition with epoch 2
    const appended: string[] = [];
    const streams = {
      ensureGroup: async () => undefined,
      append: async (_spec: unknown, messages: Array<{ taskId: string }>) => messages.map((m) => (appended.push(m.taskId), '1-0')),
      remove: async () => undefined,
      reclaim: async () => [],
    } as unknown as StreamDispatch;
    const deps = actorDeps({
      store,
      clock,
      router: routerWith(),
      overrides: { partitions: 1, redisUrl: 'redis://127.0.0.1:1', externalQueues: { ext: {} } },
      fences,
    });
    let pumps = 0;
    const lanes = new ExternalLanes(deps, streams, externalQueueSpecs(deps.config), { record: async () => null, pump: () => void pumps++ });
    clock.set(T0 + 1000);
    lanes.add(entry('x', T0 + 1000, 'ext'));
    lanes.pump(clock.now());
    while (pumps === 0) await new Promise((r) => setImmediate(r));
    expect(appended).to.deep.equal([]);
    expect((await store.getTask('x'))!.state).to.equal('SCHEDULED');
    lanes.stop();
  });
});
