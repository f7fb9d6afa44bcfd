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
 * The dispatcher takes in every hand-out of one turn before it claims: when the partition owners'
 * `enqueue` messages arrive together (each owner hands out a few entries), the free worker slots
 * are filled by full claim batches, not by one small claim and one `run` message per message.
 */
describe('DispatcherActor: the hand-outs of one turn are claimed together', () => {
  let store: SqliteStore;
  let dispatcher: DispatcherActor;

  beforeEach(async () => ({ store } = await memoryStoreAndClock(T0)));
  afterEach(() => closeDispatcherAndStore(dispatcher, store));

  /**
   * 40 PENDING tasks in the store, and a dispatcher over it with one worker of 100 free slots:
   * the store's claims are counted (their sizes), and the worker's `run` messages recorded (the
   * ids each carried) instead of sent.
   */
  async function rig(overrides: Record<string, number> = {}, clock = new ManualClock(T0), afterClaim: () => void = () => undefined) {
    const ids = Array.from({ length: 40 }, (_, i) => `t${i}`);
    await store.insertTasks(ids.map((id) => waitingTask(id, T0, T0, { state: 'PENDING' })));
    const claims: number[] = [];
    const counting = Object.create(store) as SqliteStore; // every other call goes to the store itself
    counting.claimTasks = (claimIds, ...rest) => {
      claims.push(claimIds.length);
      return store.claimTasks(claimIds, ...rest).then((claimed) => {
        afterClaim();
        return claimed;
      });
    };
    const router = routerWith({ owners: [{ tell: () => undefined } as never] });
    const runs: string[][] = [];
    const slot = {
      id: 'w1',
      pid: 1,
      credits: 100,
      ref: { tell: (_topic: string, msg: { tasks: Array<{ id: string }> }) => runs.push(msg.tasks.map((t) => t.id)) },
    } as unknown as WorkerSlot;
    const pool = {
      all: () => [slot][Symbol.iterator](),
      get: (id: string) => (id === slot.id ? slot : undefined),
      stop: () => undefined,
      killLeftovers: () => undefined,
      disableRespawn: () => undefined,
    };
    dispatcher = new DispatcherActor(
      actorDeps({ store: counting, clock, router, overrides: { partitions: 1, ...overrides } }),
      () => pool as unknown as PoolWorkers,
    );
    const entries = dueEntries(ids, T0);
    return { ids, entries, claims, runs, slot };
  }

  it('40 enqueue messages of one entry in one turn → one claim of 40 and one run message', async () => {
    const { ids, entries, claims, runs, slot } = await rig();
    for (const e of entries) dispatcher.enqueue([e]);
    expect(claims, 'no claim inside the turn').to.deep.equal([]);
    await settle();

    expect(claims).to.deep.equal([40]);
    expect(runs).to.deep.equal([ids]);
    expect(slot.credits).to.equal(60);
    expect((await store.getTask('t39'))?.state).to.equal('RUNNING');
  });

  it('claims for one worker answered together → one run message carrying all their attempts', async () => {
    const { ids, entries, claims, runs } = await rig({ workerBatchMax: 16 });
    dispatcher.enqueue(entries);
    await settle();

    expect(claims).to.deep.equal([16, 16, 8]); // workerBatchMax per claim
    expect(runs).to.deep.equal([ids]);
  });

  it('a claim answered once its attempts lease has ended (the process stalled) starts none of them; they are retried free and claimed again', async () => {
    const clock = new ManualClock(T0);
    let stalled = false;
    const stallOnce = () => {
      if (!stalled) clock.advance(5000);
      stalled = true;
    };
    const { ids, entries, claims, runs, slot } = await rig({ leaseMs: 5000 }, clock, stallOnce);
    dispatcher.enqueue(entries);
    await settle();

    // The first claim's 40 attempts were not started: each was recorded at once as a free retry
    // (claim_late; before, left RUNNING for the attempt-lease sweeper, which charged it), handed
    // out again and claimed in time as attempt 2.
    expect(claims).to.deep.equal([40, 40]);
    expect(runs, 'one run message: the second claim').to.deep.equal([ids]);
    expect(slot.credits, 'the late claim gave its credits back').to.equal(60);
    expect((await store.getAttempts('t0')).map((h) => [h.attempt, h.error?.type])).to.deep.equal([[1, 'claim_late']]);
    expect(await store.getTask('t0')).to.deep.include({ state: 'RUNNING', attempts: 2 });
  });
});
