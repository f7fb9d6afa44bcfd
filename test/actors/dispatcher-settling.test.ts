import { expect } from 'chai';
import { DispatcherActor } from '../../src/actors/dispatcher/dispatcher';
import type { WorkerSlot } from '../../src/actors/dispatcher/worker-pool';
import type { WorkResult } from '../../src/actors/protocol';
import { ManualClock } from '../../src/domain/clock';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store';
import {
  actorDeps,
  dueEntries,
  settle,
  waitingTask,
  routerWith,
  memoryStoreAndClock,
  closeDispatcherAndStore,
} from '../helpers/actor-deps';
import { fakeWorkers, RecordedRun } from '../helpers/fake-workers';

const T0 = Date.UTC(2026, 5, 1, 12, 0, 0);
const GRACE_MS = 2000;

/**
 * An attempt aborted (cancel or timeout) whose handler goes on running: the worker reports its
 * outcome at the abort (`handlerRunning`) and says `settled` when the handler stops. The attempt
 * ends only then, or when its process is killed `timeoutGraceMs` after the abort: until then its
 * task stays RUNNING, its concurrency-key slot stays taken and its retry is not written, so
 * nothing that follows it starts beside the handler. Two fake workers, a manual clock, an
 * in-memory store.
 */
describe('DispatcherActor: an aborted attempt ends when its handler stops', () => {
  let store: SqliteStore;
  let dispatcher: DispatcherActor;
  let clock: ManualClock;

  beforeEach(async () => ({ store, clock } = await memoryStoreAndClock(T0)));
  afterEach(() => closeDispatcherAndStore(dispatcher, store));

  async function rig(ids: string[], retry: { maxRetries: number } = { maxRetries: 0 }) {
    await store.insertTasks(
      ids.map((id) => {
        const t = waitingTask(id, T0, T0, { state: 'PENDING' });
        return { ...t, concurrencyKey: 'k', timeoutSeconds: 1, retry: { ...t.retry, ...retry, delaySeconds: 0, jitter: false } };
      }),
    );
    const router = routerWith({ owners: [{ tell: () => undefined } as never] });
    const overrides = { partitions: 1, workers: 2, workerConcurrency: 2, timeoutGraceMs: GRACE_MS };
    const deps = actorDeps({ store, clock, router, overrides });
    deps.limits.concurrency.set('k', 1);
    const recorded: RecordedRun[] = [];
    let workers: ReturnType<typeof fakeWorkers> | undefined;
    dispatcher = new DispatcherActor(deps, (spec) => (workers = fakeWorkers(spec, recorded)));
    dispatcher.enqueue(dueEntries(ids, T0, 'PENDING', () => 'k'));
    await settle();
    const runs = () => recorded.flatMap((r) => r.ids);
    /** The worker that ran the first attempt (`a`), as the dispatcher knows it. */
    const slot = workers?.slots.find((w) => w.id === recorded[0]?.workerId) as WorkerSlot;
    const pid = slot.pid;
    const report = async (results: WorkResult[]) => {
      await dispatcher.completed({ workerId: slot.id, pid, results });
      await settle();
    };
    const settled = async (attempts: Array<{ id: string; attempt: number }>) => {
      await dispatcher.settled({ workerId: slot.id, pid, attempts });
      await settle();
    };
    return { runs, report, settled, limits: deps.limits, slot };
  }

  it('a cancelled attempt whose handler goes on: RUNNING, its key slot taken, until the worker says settled', async () => {
    const { runs, report, settled, limits, slot } = await rig(['a', 'b']);
    expect(runs()).to.deep.equal(['a']);
    clock.advance(100);
    await report([{ id: 'a', attempt: 1, outcome: { kind: 'cancelled' }, durationMs: 100, handlerRunning: true }]);
    expect((await store.getTask('a'))?.state, 'the handler still runs').to.equal('RUNNING');
    expect(limits.concurrency.runningOf('k')).to.equal(1);
    expect(runs(), 'the next task of the key waits').to.deep.equal(['a']);
    expect(slot.credits, "the handler keeps its worker's slot").to.equal(1);

    clock.advance(300);
    await settled([{ id: 'a', attempt: 1 }]);
    expect((await store.getTask('a'))?.state).to.equal('CANCELLED');
    expect(runs()).to.deep.equal(['a', 'b']);
    expect(limits.concurrency.runningOf('k')).to.equal(1);
  });

  it('a timed-out attempt whose handler never stops ends at the kill with its timeout (charged), and only then is retried', async () => {
    const { runs, report, slot } = await rig(['a'], { maxRetries: 1 });
    clock.advance(1000);
    const timeout = { kind: 'failed' as const, message: 'timed out', errorType: 'timeout', permanent: false };
    await report([{ id: 'a', attempt: 1, outcome: timeout, durationMs: 1000, handlerRunning: true }]);
    expect((await store.getTask('a'))?.state).to.equal('RUNNING');
    expect(runs(), 'no retry while the handler may still run').to.deep.equal(['a']);

    // The watchdog's overrun check runs every grace/2: at the abort + grace the process is killed.
    for (let i = 0; i < 4 && slot.pid !== 0; i++) {
      clock.advance(GRACE_MS / 2);
      await settle();
    }
    expect(slot.pid, 'its worker was killed').to.equal(0);
    expect(runs(), 'the retry started after the kill (on the other worker)').to.deep.equal(['a', 'a']);
    const task = await store.getTask('a');
    expect(task?.state).to.equal('RUNNING');
    expect(task?.attempts).to.equal(2);
    expect(task?.error, 'attempt 1 ended by its timeout (charged), not as a recycled neighbour').to.include({ type: 'timeout' });
  });

  it('a report whose handler settled before it was sent (no handlerRunning) ends at once', async () => {
    const { runs, report } = await rig(['a', 'b']);
    await report([{ id: 'a', attempt: 1, outcome: { kind: 'cancelled' }, durationMs: 5 }]);
    expect((await store.getTask('a'))?.state).to.equal('CANCELLED');
    expect(runs()).to.deep.equal(['a', 'b']);
  });

  it('an entry of a forged shape (a handler writing on its channel) is ignored: the real report still ends the attempt once', async () => {
    const { runs, report } = await rig(['a', 'b']);
    await report([{ id: 'a', attempt: 1, outcome: null, durationMs: 0 } as unknown as WorkResult]);
    await report([{ id: 'a', attempt: 1, outcome: { kind: 'won' }, durationMs: 0 } as unknown as WorkResult]);
    type Report = Parameters<DispatcherActor['completed']>[0];
    for (const forged of [null, {}, { results: [] }, { workerId: 7, results: [] }]) await dispatcher.completed(forged as unknown as Report); // whole messages of a foreign shape: ignored, nothing thrown
    expect((await store.getTask('a'))?.state, 'the forged entries took nothing').to.equal('RUNNING');
    expect(runs()).to.deep.equal(['a']);
    await report([{ id: 'a', attempt: 1, outcome: { kind: 'succeeded', result: { n: 1 } }, durationMs: 5 }]);
    const a = await store.getTask('a');
    expect(a?.state).to.equal('SUCCEEDED');
    expect(a?.result).to.deep.equal({ n: 1 });
    expect(runs(), 'ran once, and the next task of the key started').to.deep.equal(['a', 'b']);
  });

  it('a stale settled (no held outcome) changes nothing', async () => {
    const { runs, settled } = await rig(['a', 'b']);
    await settled([{ id: 'a', attempt: 1 }]);
    expect((await store.getTask('a'))?.state).to.equal('RUNNING');
    expect(runs()).to.deep.equal(['a']);
  });
});
