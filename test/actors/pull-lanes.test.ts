import { expect } from 'chai';
import { PullLanes } from '../../src/actors/dispatcher/pull-lanes';
import { ManualClock } from '../../src/domain/clock';
import { externalQueueSpecs } from '../../src/domain/external-queues';
import type { DueEntry } from '../../src/domain/task';
import type { LeasedAttempt } from '../../src/services/ports';
import type { AttemptCompletion } from '../../src/storage/store';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store';
import { actorDeps, routerWith, settle, waitingTask } from '../helpers/actor-deps';

const T0 = Date.UTC(2026, 5, 1, 12, 0, 0);

/** The due entry of a PENDING `noop` task of queue `jobs` (partition 0, tenant `t`). */
function entry(id: string): DueEntry {
  return { id, partition: 0, seq: 1, dueAt: T0, priority: 'medium', tenantId: 't', taskType: 'noop', state: 'PENDING', queue: 'jobs' };
}

/**
 * The pull lanes driven directly on a manual clock and an in-memory store: who gets what is
 * decided by the order of calls, not by timing. The waiter of a request whose client went away
 * while its claim was in flight, a refused claim, and the order of waiters.
 */
describe('PullLanes: lease requests and their claims', () => {
  let store: SqliteStore;
  let clock: ManualClock;
  let lanes: PullLanes;
  let recorded: AttemptCompletion[];
  let cancels: Array<[string, number]>;

  beforeEach(async () => {
    store = new SqliteStore(':memory:');
    await store.open(1);
    clock = new ManualClock(T0);
    recorded = [];
    cancels = [];
    const deps = actorDeps({
      store,
      clock,
      router: routerWith(),
      overrides: { partitions: 1, externalQueues: { jobs: { transport: 'http', leaseMs: 5000, maxInFlight: 3 } } },
    });
    lanes = new PullLanes(deps, externalQueueSpecs(deps.config).values(), {
      record: async (c) => {
        recorded.push(...c);
        lanes.settled(c);
        return null; // what the lanes do next does not depend on it
      },
      pump: () => lanes.pump(clock.now()),
      cancel: (taskId, attempt) => cancels.push([taskId, attempt]),
    });
  });
  afterEach(async () => {
    lanes.close();
    await store.close();
  });

  async function ready(...ids: string[]): Promise<void> {
    await store.insertTasks(ids.map((id) => waitingTask(id, T0, T0, { state: 'PENDING', queue: 'jobs' })));
    for (const id of ids) lanes.add(entry(id));
  }

  it('nothing is claimed without a waiting request; a request gets up to its max, worker id http:<worker_id>', async () => {
    await ready('a', 'b', 'c');
    lanes.pump(clock.now());
    await settle();
    expect((await store.getTask('a'))?.state).to.equal('PENDING');
    const got = await lanes.lease({ waiterId: 'w1', queue: 'jobs', workerId: 'host-1', max: 2, waitMs: 0 });
    expect(got.map((a) => [a.task.id, a.task.attempt, a.leaseExpiresAt])).to.deep.equal([
      ['a', 1, T0 + 5000],
      ['b', 1, T0 + 5000],
    ]);
    expect(await store.getTask('a')).to.deep.include({ state: 'RUNNING', workerId: 'http:host-1' });
    expect(lanes.stats()).to.deep.equal([{ queue: 'jobs', ready: 1, inFlight: 2, waiting: 0 }]);
    expect(lanes.abort({ taskId: 'a', attempt: 1 })).to.equal(true);
    expect(lanes.abort({ taskId: 'a', attempt: 2 })).to.equal(false);
    expect(cancels).to.deep.equal([['a', 1]]);
  });

  it('waiters are served oldest first, each up to maxInFlight; a timer answers [] on the clock', async () => {
    const answers: Record<string, LeasedAttempt[]> = {};
    const ask = (id: string, max: number) =>
      void lanes.lease({ waiterId: id, queue: 'jobs', workerId: id, max, waitMs: 10_000 }).then((r) => (answers[id] = r));
    ask('first', 2);
    ask('second', 2);
    ask('third', 2);
    await ready('a', 'b', 'c', 'd');
    lanes.pump(clock.now());
    await settle();
    expect(answers.first.map((a) => a.task.id)).to.deep.equal(['a', 'b']);
    expect(answers.second.map((a) => a.task.id)).to.deep.equal(['c']); // maxInFlight 3
    expect(answers.third).to.equal(undefined);
    clock.advance(10_000);
    await settle();
    expect(answers.third).to.deep.equal([]);
  });

  it('a client gone while its claim was in flight: answered [], what the claim got is retried at once, free', async () => {
    await ready('a');
    const answer = lanes.lease({ waiterId: 'w1', queue: 'jobs', workerId: 'w', max: 1, waitMs: 10_000 });
    lanes.leave('w1'); // the claim started synchronously inside lease(); it is still in flight
    expect(await answer).to.deep.equal([]);
    await settle();
    expect(recorded).to.have.length(1);
    expect(recorded[0]).to.deep.include({ taskId: 'a', attempt: 1, state: 'RETRYING', retryAt: T0 });
    expect(recorded[0].error?.type).to.equal('lease_undelivered');
    expect(lanes.stats()[0].inFlight).to.equal(0);
  });

  it('an answer that never reached its client: its attempts are retried at once, free; attempts no longer out are left alone', async () => {
    await ready('a', 'b');
    const got = await lanes.lease({ waiterId: 'w1', queue: 'jobs', workerId: 'w', max: 2, waitMs: 0 });
    expect(got.map((a) => a.task.id)).to.deep.equal(['a', 'b']);
    await lanes.undelivered([
      { taskId: 'a', attempt: 1 },
      { taskId: 'b', attempt: 2 }, // not the attempt out: left alone
      { taskId: 'z', attempt: 1 }, // never handed out here
    ]);
    expect(recorded.map((c) => [c.taskId, c.attempt, c.state, c.retryAt, c.freeRetry, c.error?.type])).to.deep.equal([
      ['a', 1, 'RETRYING', T0, true, 'lease_undelivered'],
    ]);
    expect(lanes.stats()[0].inFlight).to.equal(1); // b is still out
  });

  it('a claim refused (the task was cancelled meanwhile) puts the request back to wait; close answers it []', async () => {
    await ready('a');
    await store.cancelTask('a', T0);
    const answer = lanes.lease({ waiterId: 'w1', queue: 'jobs', workerId: 'w', max: 1, waitMs: 10_000 });
    await settle();
    expect(lanes.stats()[0]).to.deep.include({ waiting: 1, inFlight: 0 });
    lanes.close();
    expect(await answer).to.deep.equal([]);
    expect(await lanes.lease({ waiterId: 'w2', queue: 'jobs', workerId: 'w', max: 1, waitMs: 10_000 })).to.deep.equal([]);
  });
});
