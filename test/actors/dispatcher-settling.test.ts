import { expect } from 'chai';
import { DispatcherActor } from '../../src/actors/dispatcher/dispatcher';
import type { WorkerSlot } from '../../src/actors/dispatcher/worker-pool';
import type { PoolWorkers } from '../../src/actors/dispatcher/worker-pools';
import type { WorkResult } from '../../src/actors/protocol';
import { ManualClock } from '../../src/domain/clock';
import { DueEntry } from '../../src/domain/task';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store';
import { actorDeps, settle, waitingTask, routerWith } from '../helpers/actor-deps';

const T0 = Date.UTC(2026, 5, 1, 12, 0, 0);
const GRACE_MS = 2000;

/**
 * An attempt aborted (cancel or timeout) whose handler goes on running: the worker reports its
 * outcome at the abort (`handlerRunning`) and says `settled` when the handler stops. The attempt
 * ends only then, or when its process is killed `timeoutGraceMs` after the abort: until then its
 * task stays RUNNING, its concurrency-key slot stays taken and its retry is not written, so
 * nothing that follows it starts beside the handler. One fake worker, a manual clock, an
 * in-memory store.
 */
describe('DispatcherActor: an aborted attempt ends when its handler stops', () => {
  let store: SqliteStore;
  let dispatcher: DispatcherActor;
  let clock: ManualClock;

  beforeEach(async () => {
    store = new SqliteStore(':memory:');
    await store.open(1);
    clock = new ManualClock(T0);
  });
  afterEach(async () => {
    dispatcher?.destroy();
    await store.close();
  });

  async function rig(ids: string[], retry: { maxRetries: number } = { maxRetries: 0 }) {
    await store.insertTasks(
      ids.map((id) => {
        const t = waitingTask(id, T0, T0, { state: 'PENDING' });
        return { ...t, concurrencyKey: 'k', timeoutSeconds: 1, retry: { ...t.retry, ...retry, delaySeconds: 0, jitter: false } };
      }),
    );
    const router = routerWith({ owners: [{ tell: () => undefined } as never] });
    const deps = actorDeps({ store, clock, router, overrides: { partitions: 1, timeoutGraceMs: GRACE_MS } });
    deps.limits.concurrency.set('k', 1);
    const runs: string[] = [];
    const killed: string[] = [];
    const slot = {
      id: 'w1',
      pid: 1,
      credits: 4,
      ref: { tell: (topic: string, msg: { tasks: Array<{ id: string }> }) => topic === 'run' && runs.push(...msg.tasks.map((t) => t.id)) },
    } as unknown as WorkerSlot;
    const pool = {
      all: () => [slot][Symbol.iterator](),
      get: (id: string) => (id === slot.id ? slot : undefined),
      kill: (s: WorkerSlot) => killed.push(s.id),
      stop: () => undefined,
      killLeftovers: () => undefined,
      disableRespawn: () => undefined,
    };
    dispatcher = new DispatcherActor(deps, () => pool as unknown as PoolWorkers);
    const entries: DueEntry[] = ids.map((id, i) => ({
      id,
      partition: 0,
      seq: i + 1,
      dueAt: T0,
      priority: 'medium',
      tenantId: 't',
      taskType: 'noop',
      state: 'PENDING',
      concurrencyKey: 'k',
    }));
    dispatcher.enqueue(entries);
    await settle();
    const report = async (results: WorkResult[]) => {
      await dispatcher.completed({ workerId: 'w1', pid: 1, results });
      await settle();
    };
    return { runs, killed, report, limits: deps.limits, slot };
  }

  it('a cancelled attempt whose handler goes on: RUNNING, its key slot taken, until the worker says settled', async () => {
    const { runs, report, limits, slot } = await rig(['a', 'b']);
    expect(runs).to.deep.equal(['a']);
    clock.advance(100);
    await report([{ id: 'a', attempt: 1, outcome: { kind: 'cancelled' }, durationMs: 100, handlerRunning: true }]);
    expect((await store.getTask('a'))?.state, 'the handler still runs').to.equal('RUNNING');
    expect(limits.concurrency.runningOf('k')).to.equal(1);
    expect(runs, 'the next task of the key waits').to.deep.equal(['a']);
    expect(slot.credits, "the handler keeps its worker's slot").to.equal(3);

    clock.advance(300);
    await dispatcher.settled({ workerId: 'w1', pid: 1, attempts: [{ id: 'a', attempt: 1 }] });
    await settle();
    expect((await store.getTask('a'))?.state).to.equal('CANCELLED');
    expect(runs).to.deep.equal(['a', 'b']);
    expect(limits.concurrency.runningOf('k')).to.equal(1);
  });

  it('a timed-out attempt whose handler never stops ends at the kill with its timeout (charged), and only then is retried', async () => {
    const { runs, killed, report } = await rig(['a'], { maxRetries: 1 });
    clock.advance(1000);
    const timeout = { kind: 'failed' as const, message: 'timed out', errorType: 'timeout', permanent: false };
    await report([{ id: 'a', attempt: 1, outcome: timeout, durationMs: 1000, handlerRunning: true }]);
    expect((await store.getTask('a'))?.state).to.equal('RUNNING');
    expect(runs, 'no retry while the handler may still run').to.deep.equal(['a']);

    // The watchdog's overrun check runs every grace/2: at the abort + grace the process is killed.
    for (let i = 0; i < 4 && killed.length === 0; i++) {
      clock.advance(GRACE_MS / 2);
      await settle();
    }
    expect(killed).to.deep.equal(['w1']);
    expect(runs, 'the retry started after the kill').to.deep.equal(['a', 'a']);
    const task = await store.getTask('a');
    expect(task?.state).to.equal('RUNNING');
    expect(task?.attempts).to.equal(2);
    expect(task?.error, 'attempt 1 ended by its timeout (charged), not as a recycled neighbour').to.include({ type: 'timeout' });
  });

  it('a report whose handler settled before it was sent (no handlerRunning) ends at once', async () => {
    const { runs, report } = await rig(['a', 'b']);
    await report([{ id: 'a', attempt: 1, outcome: { kind: 'cancelled' }, durationMs: 5 }]);
    expect((await store.getTask('a'))?.state).to.equal('CANCELLED');
    expect(runs).to.deep.equal(['a', 'b']);
  });

  it('a stale settled (no held outcome) changes nothing', async () => {
    const { runs } = await rig(['a', 'b']);
    await dispatcher.settled({ workerId: 'w1', pid: 1, attempts: [{ id: 'a', attempt: 1 }] });
    await settle();
    expect((await store.getTask('a'))?.state).to.equal('RUNNING');
    expect(runs).to.deep.equal(['a']);
  });
});
