import { expect } from 'chai';
import { ExternalAttempts } from '../../src/actors/dispatcher/external-attempts';
import { ManualClock } from '../../src/domain/clock';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store';
import { actorDeps, memoryStoreAndClock, routerWith, settle, waitingTask } from '../helpers/actor-deps';

const T0 = Date.UTC(2026, 5, 1, 12, 0, 0);

/**
 * The external lease sweep after a (re)start, on a manual clock and an in-memory store: each
 * attempt's lease is judged only once its own queue's `leaseMs` has passed since the start (its
 * consumer could not heartbeat while the service was down), not the shortest queue's.
 */
describe('ExternalAttempts: the lease sweep after a start', () => {
  let store: SqliteStore;
  let clock: ManualClock;
  let sweep: ExternalAttempts | null = null;
  beforeEach(async () => ({ store, clock } = await memoryStoreAndClock(T0)));
  afterEach(async () => {
    sweep?.stop();
    await store.close();
  });

  it("a long-lease queue's attempts get their whole lease after the start, while a short-lease queue's are judged after theirs", async () => {
    await store.insertTasks([
      waitingTask('short-stream', T0, T0, { state: 'PENDING', queue: 'fast' }),
      waitingTask('long-pull', T0, T0, { state: 'PENDING', queue: 'slow' }),
      waitingTask('long-stream', T0, T0, { state: 'PENDING', queue: 'slow-stream' }),
    ]);
    // Leased before the service went down; each lease ran out while it was.
    await store.claimTasks(['short-stream'], 'external:fast', T0, 200);
    await store.claimTasks(['long-pull'], 'http:w1', T0, 3000);
    await store.claimTasks(['long-stream'], 'external:slow-stream', T0, 3000);
    clock.set(T0 + 10_000);
    const lost: string[] = [];
    const deps = actorDeps({ store, clock, router: routerWith() });
    sweep = new ExternalAttempts(
      deps,
      [
        { name: 'fast', leaseMs: 200 },
        { name: 'slow', leaseMs: 3000 },
        { name: 'slow-stream', leaseMs: 3000 },
      ],
      {
        record: async (completions, now) => {
          const out = await store.completeAttempts(completions, now);
          lost.push(...out.filter((r) => r.applied).map((r) => r.taskId));
          return out;
        },
        pump: () => undefined,
      },
    );
    sweep.start();
    const advance = async (ms: number) => {
      for (let t = 0; t < ms; t += 50) {
        clock.advance(50);
        await settle();
      }
    };
    await advance(400);
    expect(lost).to.deep.equal(['short-stream']);
    // A heartbeat of the pull worker within its own lease after the start keeps the attempt.
    expect(await store.extendLeases([{ taskId: 'long-pull', attempt: 1 }], clock.now() + 3000)).to.equal(1);
    await advance(2700);
    expect(lost).to.deep.equal(['short-stream', 'long-stream']);
    expect((await store.getTask('long-pull'))?.state).to.equal('RUNNING');
  });
});
