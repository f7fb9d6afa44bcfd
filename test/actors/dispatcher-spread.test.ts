import { expect } from 'chai';
import { DispatcherActor } from '../../src/actors/dispatcher/dispatcher';
import { ManualClock } from '../../src/domain/clock';
import { DueEntry } from '../../src/domain/task';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store';
import { actorDeps, settle, waitingTask, routerWith, memoryStoreAndClock, closeDispatcherAndStore } from '../helpers/actor-deps';
import { fakeWorkers, RecordedRun } from '../helpers/fake-workers';

const T0 = Date.UTC(2026, 5, 1, 12, 0, 0);

/**
 * The dispatcher's choice of worker process, on a manual clock and an in-memory store, with fake
 * workers whose `run` messages are recorded: least loaded first (most free slots, ties in turn),
 * a burst split over the workers in one run message each, and task types pinned to a pool of
 * their own claimed only against that pool's free slots.
 */
describe('DispatcherActor: spreading attempts over worker processes and pools', () => {
  let store: SqliteStore;
  let dispatcher: DispatcherActor;
  let clock: ManualClock;

  beforeEach(async () => ({ store, clock } = await memoryStoreAndClock(T0)));
  afterEach(() => closeDispatcherAndStore(dispatcher, store));

  /**
   * PENDING tasks in the store (type `noop` unless given) and a dispatcher over fake workers built
   * from `overrides` (default: 2 workers × 4 slots). Every store claim is recorded (worker, ids).
   */
  async function rig(tasks: Array<{ id: string; type?: string; key?: string }>, overrides: Record<string, unknown> = {}) {
    await store.insertTasks(
      tasks.map((t) => ({
        ...waitingTask(t.id, T0, T0, { state: 'PENDING' }),
        taskType: t.type ?? 'noop',
        ...(t.key ? { concurrencyKey: t.key } : {}),
      })),
    );
    const claims: Array<{ workerId: string; ids: string[] }> = [];
    const counting = Object.create(store) as SqliteStore; // every other call goes to the store itself
    counting.claimTasks = (ids, workerId, ...rest) => {
      claims.push({ workerId, ids: [...ids] });
      return store.claimTasks(ids, workerId, ...rest);
    };
    const router = routerWith({ owners: [{ tell: () => undefined } as never] });
    const deps = actorDeps({
      store: counting,
      clock,
      router,
      overrides: { partitions: 1, workers: 2, workerConcurrency: 4, ...overrides },
    });
    const runs: RecordedRun[] = [];
    const pools = new Map<string, ReturnType<typeof fakeWorkers>>();
    dispatcher = new DispatcherActor(deps, (spec) => {
      const workers = fakeWorkers(spec, runs);
      pools.set(spec.name, workers);
      return workers;
    });
    const entry = (id: string): DueEntry => {
      const t = tasks.find((x) => x.id === id) as { id: string; type?: string; key?: string };
      return {
        id,
        partition: 0,
        seq: tasks.indexOf(t) + 1,
        dueAt: T0,
        priority: 'medium',
        tenantId: 't',
        taskType: t.type ?? 'noop',
        state: 'PENDING',
        ...(t.key ? { concurrencyKey: t.key } : {}),
      };
    };
    const enqueue = async (...ids: string[]) => {
      dispatcher.enqueue(ids.map(entry));
      await settle();
    };
    /** `workerId` reports these attempts succeeded. */
    const succeed = async (workerId: string, ids: string[]) => {
      clock.advance(10);
      const slot = [...pools.values()].flatMap((p) => p.slots).find((s) => s.id === workerId);
      await dispatcher.completed({
        workerId,
        pid: slot?.pid ?? -1,
        results: ids.map((id) => ({ id, attempt: 1, outcome: { kind: 'succeeded', result: null }, durationMs: 1 }) as const),
      });
      await settle();
    };
    const ranOn = (workerId: string) => runs.filter((r) => r.workerId === workerId).flatMap((r) => r.ids);
    const stateOf = async (id: string) => (await store.getTask(id))?.state;
    return { runs, claims, pools, enqueue, succeed, ranOn, stateOf, metrics: deps.metrics, limits: deps.limits };
  }

  const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

  it('2 workers × 4 slots, 4 tasks at once → 2 and 2, one claim and one run message per worker', async () => {
    const r = await rig(ids('t', 4).map((id) => ({ id })));
    await r.enqueue(...ids('t', 4));

    expect(r.ranOn('worker-1')).to.have.length(2);
    expect(r.ranOn('worker-2')).to.have.length(2);
    expect(r.runs).to.have.length(2);
    expect(r.claims.map((c) => [c.workerId, c.ids.length])).to.deep.equal([
      ['worker-1', 2],
      ['worker-2', 2],
    ]);
    expect(r.pools.get('default')?.slots.map((s) => s.credits)).to.deep.equal([2, 2]);
  });

  it('uneven free slots: the freer worker first', async () => {
    const r = await rig(ids('t', 4).map((id) => ({ id })));
    const [w1] = r.pools.get('default')?.slots ?? [];
    w1.credits = 1; // three slots of worker-1 are taken
    await r.enqueue('t0');
    expect(r.ranOn('worker-2')).to.deep.equal(['t0']);

    await r.enqueue('t1', 't2', 't3'); // worker-2 has 3 free, worker-1 1: 2 more to worker-2, then one each
    expect(r.ranOn('worker-1')).to.have.length(1);
    expect(r.ranOn('worker-2')).to.have.length(3);
  });

  it('one task at a time on idle workers: they take turns, not every task on worker-1', async () => {
    const r = await rig(ids('t', 4).map((id) => ({ id })));
    const order: string[] = [];
    for (const id of ids('t', 4)) {
      await r.enqueue(id);
      const run = r.runs[r.runs.length - 1];
      expect(run.ids).to.deep.equal([id]);
      order.push(run.workerId);
      await r.succeed(run.workerId, [id]);
    }
    expect(order).to.deep.equal(['worker-1', 'worker-2', 'worker-1', 'worker-2']);
    expect(r.pools.get('default')?.slots.map((s) => s.credits)).to.deep.equal([4, 4]);
  });

  describe('a task type pinned to a pool of its own', () => {
    const cpuPool = {
      handlers: { crunch: './crunch.js' },
      workerPools: [{ name: 'cpu', taskTypes: ['crunch'], processes: 1, concurrency: 1 }],
    };

    it('runs only on its pool, claimed no more than its free slots; other types go on while it is full', async () => {
      const tasks = [...ids('c', 3).map((id) => ({ id, type: 'crunch' })), ...ids('n', 4).map((id) => ({ id }))];
      const r = await rig(tasks, cpuPool);
      await r.enqueue('c0', 'c1', 'c2', 'n0', 'n1');

      expect(r.ranOn('cpu-worker-1')).to.deep.equal(['c0']);
      expect([...r.ranOn('worker-1'), ...r.ranOn('worker-2')].sort()).to.deep.equal(['n0', 'n1']);
      expect(await r.stateOf('c1')).to.equal('PENDING');
      expect(await r.stateOf('c2')).to.equal('PENDING');

      // The pinned pool is full: ordinary tasks arriving now are claimed at once all the same.
      await r.enqueue('n2', 'n3');
      expect(await r.stateOf('n2')).to.equal('RUNNING');
      expect(await r.stateOf('n3')).to.equal('RUNNING');
      expect(r.ranOn('cpu-worker-1')).to.deep.equal(['c0']);

      // Its slot frees: the next pinned task starts there, and only one.
      await r.succeed('cpu-worker-1', ['c0']);
      expect(r.ranOn('cpu-worker-1')).to.deep.equal(['c0', 'c1']);
      expect(await r.stateOf('c2')).to.equal('PENDING');
      await r.succeed('cpu-worker-1', ['c1']);
      expect(r.ranOn('cpu-worker-1')).to.deep.equal(['c0', 'c1', 'c2']);

      // No claim ever took more pinned tasks than the pool's one slot, nor put one elsewhere.
      for (const c of r.claims) {
        const crunch = c.ids.filter((id) => id.startsWith('c'));
        if (c.workerId === 'cpu-worker-1') expect(c.ids).to.have.length(1);
        else expect(crunch, `claim for ${c.workerId}`).to.deep.equal([]);
      }
    });

    it('a concurrency key shared across pools: a slot freed in one pool starts the task set aside in the other', async () => {
      const r = await rig(
        [
          { id: 'n-k', key: 'k' },
          { id: 'c-k', type: 'crunch', key: 'k' },
        ],
        cpuPool,
      );
      r.limits.concurrency.set('k', 1);
      await r.enqueue('n-k', 'c-k');
      const first = (await r.stateOf('n-k')) === 'RUNNING' ? 'n-k' : 'c-k';
      const second = first === 'n-k' ? 'c-k' : 'n-k';
      expect(await r.stateOf(first)).to.equal('RUNNING');
      expect(await r.stateOf(second)).to.equal('PENDING');

      await r.succeed(r.runs[0].workerId, [first]);
      expect(await r.stateOf(second)).to.equal('RUNNING');
    });

    it('/metrics shows the slots of each worker process with its pool; stats name the pool', async () => {
      const r = await rig([{ id: 'c0', type: 'crunch' }, { id: 'n0' }], cpuPool);
      await r.enqueue('c0', 'n0');

      const text = await r.metrics.registry.metrics();
      expect(text).to.include('scheduler_worker_slots{pool="cpu",worker_id="cpu-worker-1",state="busy"} 1');
      expect(text).to.include('scheduler_worker_slots{pool="cpu",worker_id="cpu-worker-1",state="free"} 0');
      expect(text).to.include('scheduler_worker_slots{pool="default",worker_id="worker-1",state="busy"} 1');
      expect(text).to.include('scheduler_worker_slots{pool="default",worker_id="worker-2",state="free"} 4');
      expect(dispatcher.stats().workers.map((w) => `${w.pool}/${w.id}`)).to.deep.equal([
        'default/worker-1',
        'default/worker-2',
        'cpu/cpu-worker-1',
      ]);
    });
  });
});
