import { expect } from 'chai';
import { DispatcherActor } from '../../src/actors/dispatcher/dispatcher';
import { ManualClock } from '../../src/domain/clock';
import { DueEntry } from '../../src/domain/task';
import type { StoreFault } from '../../src/storage/store-health';
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
import { fakeWorkers, RecordedRun } from '../helpers/fake-workers';

const T0 = Date.UTC(2026, 5, 1, 12, 0, 0);
const GRACE = 10_000;

/**
 * A drain (graceful stop) while the store cannot take writes, on a manual clock (the grace never
 * runs out unless the test advances it), an in-memory store and fake workers: completions kept
 * in memory hold the drain only while the store may still take them (a recoverable fault); once
 * the fault is not recoverable (the file deleted or replaced) nothing can write them, so the
 * drain ends as soon as nothing runs, and they are not counted as still running. When the grace
 * runs out, what still runs is recorded as a free retry (`service_stopped`).
 */
describe('DispatcherActor: a drain while the store has a fault', () => {
  let store: SqliteStore;
  let dispatcher: DispatcherActor;
  let clock: ManualClock;

  beforeEach(async () => ({ store, clock } = await memoryStoreAndClock(T0)));
  afterEach(() => closeDispatcherAndStore(dispatcher, store));

  const fault = (recoverable: boolean): StoreFault => ({
    kind: recoverable ? 'disk_full' : 'file_deleted',
    target: 's.db',
    cause: 'test',
    recoverable,
    since: clock.now(),
  });

  /** 4 PENDING tasks claimed and sent to 2 fake workers; `succeed(ids)` reports them done. */
  async function rig() {
    const ids = ['a', 'b', 'c', 'd'];
    await store.insertTasks(ids.map((id) => waitingTask(id, T0, T0, { state: 'PENDING' })));
    const offered: string[] = [];
    const owner = { tell: (kind: string, list: DueEntry[]) => void (kind === 'offer' && offered.push(...list.map((e) => e.id))) };
    const router = routerWith({ owners: [owner as never] });
    const runs: RecordedRun[] = [];
    let workers: ReturnType<typeof fakeWorkers> | undefined;
    dispatcher = new DispatcherActor(
      actorDeps({ store, clock, router, overrides: { partitions: 1, workers: 2, workerConcurrency: 4 } }),
      (spec) => (workers = fakeWorkers(spec, runs)),
    );
    const entries = dueEntries(ids, T0);
    dispatcher.enqueue(entries);
    await settle();
    expect(runs.flatMap((r) => r.ids).sort()).to.deep.equal(ids);
    const succeed = async () => {
      clock.advance(5);
      for (const run of runs) {
        const slot = workers?.slots.find((s) => s.id === run.workerId);
        await dispatcher.completed({
          workerId: run.workerId,
          pid: slot?.pid ?? -1,
          results: run.ids.map((id) => ({ id, attempt: 1, outcome: { kind: 'succeeded', result: null }, durationMs: 5 }) as const),
        });
      }
      await settle();
    };
    return { succeed, offered, slots: () => workers?.slots ?? [] };
  }

  /** Starts a drain; `result()` is its answer once given, else undefined (the grace is not advanced). */
  function drain() {
    let answer: Awaited<ReturnType<DispatcherActor['drain']>> | undefined;
    void dispatcher.drain({ graceMs: GRACE }).then((r) => (answer = r));
    return { result: () => answer };
  }

  it('a drain still waits for running attempts, and ends once they are written (no fault)', async () => {
    const r = await rig();
    const d = drain();
    await settle();
    expect(d.result()).to.equal(undefined);
    await r.succeed();
    expect(d.result()).to.deep.equal({ stillRunning: 0, unwritten: 0 });
    expect((await store.getTask('a'))?.state).to.equal('SUCCEEDED');
  });

  it('the file deleted, attempts ended since: the drain ends at once; their unwritten completions are not counted as running', async () => {
    const r = await rig();
    store.health.report(fault(false));
    await r.succeed(); // kept in memory: the store refuses every write now
    const d = drain();
    await settle();
    expect(d.result()).to.deep.equal({ stillRunning: 0, unwritten: 4 });
  });

  it('a drain waiting for running attempts ends when they end after the file was deleted', async () => {
    const r = await rig();
    const d = drain();
    await settle();
    store.health.report(fault(false));
    await settle();
    expect(d.result()).to.equal(undefined); // still running
    await r.succeed();
    expect(d.result()).to.deep.include({ stillRunning: 0 });
  });

  it('completions kept under a recoverable fault hold the drain; a fault that is not recoverable then ends it', async () => {
    const r = await rig();
    store.health.report(fault(true));
    await r.succeed();
    const d = drain();
    await settle();
    expect(d.result()).to.equal(undefined); // the store may take them within the grace
    store.health.report(fault(false));
    await settle();
    expect(d.result()).to.deep.include({ stillRunning: 0 });
  });

  it('completions kept under a recoverable fault: the drain ends once the recovered store has taken them', async () => {
    const r = await rig();
    store.health.report(fault(true));
    await r.succeed();
    const d = drain();
    await settle();
    expect(d.result()).to.equal(undefined);
    store.health.recovered();
    await settle();
    expect((await store.getTask('a'))?.state).to.equal('SUCCEEDED');
    expect(d.result()).to.deep.include({ stillRunning: 0 });
  });

  it('the grace runs out under a store fault: the free retries are not written, counted unwritten, not as ended', async () => {
    await rig();
    store.health.report(fault(true));
    const d = drain();
    await settle();
    clock.advance(GRACE);
    await settle();
    expect(d.result()).to.deep.equal({ stillRunning: 0, unwritten: 4 });
  });

  it('the grace runs out: what still runs becomes a free retry (service_stopped), even with no retries left; a late report is refused', async () => {
    const r = await rig();
    const d = drain();
    await settle();
    expect(r.slots().every((s) => s.pid > 0)).to.equal(true);
    clock.advance(GRACE);
    await settle();
    expect(d.result()).to.deep.equal({ stillRunning: 4, unwritten: 0 });
    // Their processes were killed before the retries were written; the retries went to their
    // partition's owner (elsewhere in a cluster: woken now), not to this draining dispatcher.
    expect(r.slots().map((s) => s.pid)).to.deep.equal([0, 0]);
    expect([...r.offered].sort()).to.deep.equal(['a', 'b', 'c', 'd']);
    for (const id of ['a', 'b', 'c', 'd']) {
      const t = await store.getTask(id);
      // maxRetries 0: a charged loss would have made it DEAD.
      expect(t?.state, id).to.be.oneOf(['PENDING', 'RETRYING']);
      expect(t?.attempts, id).to.equal(1);
      expect(t?.retry.attemptBase, id).to.equal(1);
      expect(t?.error, id).to.deep.include({ type: 'service_stopped', retryable: true });
    }
    await r.succeed(); // the workers' reports arrive after the interruption: not running here any more
    expect((await store.getTask('a'))?.state).to.not.equal('SUCCEEDED');
  });
});
