import { expect } from 'chai';
import { DispatcherActor } from '../../src/actors/dispatcher/dispatcher';
import { CLAIM_LATE } from '../../src/domain/lost-attempt';
import type { ManualClock } from '../../src/domain/clock';
import type { SqliteStore } from '../../src/storage/sqlite/sqlite-store';
import {
  actorDeps,
  closeDispatcherAndStore,
  dueEntries,
  memoryStoreAndClock,
  routerWith,
  settle,
  waitingTask,
} from '../helpers/actor-deps';
import { fakeWorkers, RecordedRun } from '../helpers/fake-workers';

const T0 = Date.UTC(2026, 5, 1, 12, 0, 0);
const LEASE_MS = 5000;

/**
 * A claim the store answers after the attempt's lease ended (a table lock or an outage held it
 * up; a helper held `LOCK TABLE tasks` 30 s on PostgreSQL): the attempt must not start
 * (`lateClaims`), and it is recorded at once as a free retry (`claim_late`). Before, it was left
 * RUNNING for the lease sweep, which charged it as `worker_lost`: 68 tasks with `max_retries` 0
 * went DEAD without having run. Manual clock, in-memory store, fake workers.
 */
describe('DispatcherActor: a claim answered after its lease ended', () => {
  let store: SqliteStore;
  let clock: ManualClock;
  let dispatcher: DispatcherActor | undefined;

  beforeEach(async () => ({ store, clock } = await memoryStoreAndClock(T0)));
  afterEach(() => closeDispatcherAndStore(dispatcher, store));

  it('its attempt never starts and is retried free at once: a task with max_retries 0 then runs, instead of going DEAD', async () => {
    await store.insertTasks([waitingTask('a', T0, T0, { state: 'PENDING' })]); // max_retries 0
    let holdUp = true;
    const slowClaims = new Proxy(store, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver) as unknown;
        if (typeof v !== 'function') return v;
        const fn = v as (...a: unknown[]) => unknown;
        if (prop !== 'claimTasks') return (...args: unknown[]) => fn.apply(target, args);
        return async (...args: unknown[]) => {
          const claimed = await fn.apply(target, args);
          if (holdUp) clock.advance(LEASE_MS + 1); // answered once its lease had ended
          holdUp = false;
          return claimed;
        };
      },
    });
    const owner = { tell: () => undefined };
    const runs: RecordedRun[] = [];
    dispatcher = new DispatcherActor(
      actorDeps({
        store: slowClaims,
        clock,
        router: routerWith({ owners: [owner as never] }),
        overrides: { partitions: 1, workers: 1, workerConcurrency: 4, leaseMs: LEASE_MS },
      }),
      (spec) => fakeWorkers(spec, runs),
    );
    dispatcher.enqueue(dueEntries(['a'], T0));
    await settle();
    await settle();
    // Attempt 1 was claimed too late: never sent, recorded at once as a free retry, due now;
    // attempt 2 was claimed in time and sent. Before: attempt 1 stayed RUNNING until the lease
    // sweep charged it (worker_lost), and with max_retries 0 the task went DEAD without running.
    expect(runs.map((r) => r.ids)).to.deep.equal([['a']]);
    const history = await store.getAttempts('a');
    expect(history.map((h) => [h.attempt, h.error?.type])).to.deep.equal([[1, CLAIM_LATE]]);
    expect(await store.getTask('a')).to.deep.include({ state: 'RUNNING', attempts: 2 });
  });
});
