import { expect } from 'chai';
import { DispatcherActor } from '../../src/actors/dispatcher/dispatcher';
import type { WorkerSlot } from '../../src/actors/dispatcher/worker-pool';
import type { PoolWorkers } from '../../src/actors/dispatcher/worker-pools';
import { ManualClock } from '../../src/domain/clock';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store';
import {
  actorDeps,
  settle,
  waitingTask,
  routerWith,
  dueEntries,
  memoryStoreAndClock,
  closeDispatcherAndStore,
} from '../helpers/actor-deps';

const T0 = Date.UTC(2026, 5, 1, 12, 0, 0);

/**
 * The dispatcher with concurrency keys, on a manual clock and an in-memory store, with one fake
 * worker of 20 slots whose `run` messages are recorded: a key's limit caps its attempts out at
 * once, an ended attempt (reported, lost, or refused at the claim) frees its slot for the next
 * task of the key, and tasks of other keys use the free slots meanwhile.
 */
describe('DispatcherActor: concurrency keys', () => {
  let store: SqliteStore;
  let dispatcher: DispatcherActor;
  let clock: ManualClock;

  beforeEach(async () => ({ store, clock } = await memoryStoreAndClock(T0)));
  afterEach(() => closeDispatcherAndStore(dispatcher, store));

  async function rig(tasks: Array<{ id: string; key?: string }>, limits: Record<string, number>) {
    await store.insertTasks(
      tasks.map((t) => ({ ...waitingTask(t.id, T0, T0, { state: 'PENDING' }), ...(t.key ? { concurrencyKey: t.key } : {}) })),
    );
    const router = routerWith({ owners: [{ tell: () => undefined } as never] });
    const deps = actorDeps({ store, clock, router, overrides: { partitions: 1 } });
    for (const [k, n] of Object.entries(limits)) deps.limits.concurrency.set(k, n);
    const runs: string[] = [];
    const slot = {
      id: 'w1',
      pid: 1,
      credits: 20,
      ref: { tell: (_topic: string, msg: { tasks: Array<{ id: string }> }) => runs.push(...msg.tasks.map((t) => t.id)) },
    } as unknown as WorkerSlot;
    const pool = {
      all: () => [slot][Symbol.iterator](),
      get: (id: string) => (id === slot.id ? slot : undefined),
      stop: () => undefined,
      killLeftovers: () => undefined,
      disableRespawn: () => undefined,
    };
    dispatcher = new DispatcherActor(deps, () => pool as unknown as PoolWorkers);
    const keys = new Map(tasks.map((t) => [t.id, t.key]));
    const entries = dueEntries(
      tasks.map((t) => t.id),
      T0,
      'PENDING',
      (id) => keys.get(id),
    );
    const succeed = async (ids: string[]) => {
      clock.advance(10);
      await dispatcher.completed({
        workerId: 'w1',
        pid: 1,
        results: ids.map((id) => ({ id, attempt: 1, outcome: { kind: 'succeeded', result: null }, durationMs: 1 })),
      });
      await settle();
    };
    return { entries, runs, succeed, limits: deps.limits };
  }

  const hotAndCold = [
    ...Array.from({ length: 8 }, (_, i) => ({ id: `hot-${i}`, key: 'hot' })),
    ...Array.from({ length: 4 }, (_, i) => ({ id: `cold-${i}` })),
  ];

  it('runs at most the limit of a key; the tasks behind it start at once; each end starts the next of the key', async () => {
    const { entries, runs, succeed, limits } = await rig(hotAndCold, { hot: 3 });
    dispatcher.enqueue(entries);
    await settle();
    expect(runs).to.deep.equal(['hot-0', 'hot-1', 'hot-2', 'cold-0', 'cold-1', 'cold-2', 'cold-3']);
    expect(limits.concurrency.runningOf('hot')).to.equal(3);

    await succeed(['hot-1']);
    expect(runs.slice(7)).to.deep.equal(['hot-3']);
    await succeed(['cold-0', 'cold-1']);
    expect(runs, 'ends of other keys free no slot of this one').to.have.length(8);
    await succeed(['hot-0', 'hot-2']);
    expect(runs.slice(8)).to.deep.equal(['hot-4', 'hot-5']);
    expect(limits.concurrency.runningOf('hot')).to.equal(3);
    expect((await store.getTask('hot-7'))?.state).to.equal('PENDING');
  });

  it('a raised limit starts more at once; a removed one starts every task of the key', async () => {
    const { entries, runs, limits } = await rig(hotAndCold, { hot: 1 });
    dispatcher.enqueue(entries);
    await settle();
    expect(runs.filter((id) => id.startsWith('hot'))).to.deep.equal(['hot-0']);
    limits.concurrency.set('hot', 4);
    await settle();
    expect(runs.filter((id) => id.startsWith('hot'))).to.deep.equal(['hot-0', 'hot-1', 'hot-2', 'hot-3']);
    limits.concurrency.set('hot', null);
    await settle();
    expect(runs.filter((id) => id.startsWith('hot'))).to.have.length(8);
  });

  it("a claim refused (the task was cancelled meanwhile) gives its slot to the key's next task", async () => {
    const { entries, runs, limits } = await rig(hotAndCold, { hot: 2 });
    await store.cancelTask('hot-0', T0);
    dispatcher.enqueue(entries);
    await settle();
    expect(runs.filter((id) => id.startsWith('hot'))).to.deep.equal(['hot-1', 'hot-2']);
    expect(limits.concurrency.runningOf('hot')).to.equal(2);
  });

  it("a lost worker's attempts free their slots", async () => {
    const { entries, runs, limits } = await rig(hotAndCold, { hot: 2 });
    dispatcher.enqueue(entries);
    await settle();
    expect(runs.filter((id) => id.startsWith('hot'))).to.deep.equal(['hot-0', 'hot-1']);
    (dispatcher as unknown as { loseAttemptsOf(id: string): void }).loseAttemptsOf('w1');
    await settle();
    // The lost attempts are retried later (RETRYING with backoff); their slots went to the next two.
    expect(runs.filter((id) => id.startsWith('hot'))).to.deep.equal(['hot-0', 'hot-1', 'hot-2', 'hot-3']);
    expect(limits.concurrency.runningOf('hot')).to.equal(2);
  });
});
