import { expect } from 'chai';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store';
import { waitingTask } from '../helpers/actor-deps';
import { lostAttemptCompletion } from '../../src/domain/lost-attempt';

const T0 = Date.UTC(2026, 5, 1, 12, 0, 0);
const LEASE = 30_000;

/**
 * `claimTasksAhead` (SQLite, `claimAheadMs`): the claim of a task before its due time leaves the
 * row's start empty and leases from the due time; the completion writes the start the dispatcher
 * sent it at; a task due past `until`, cancelled or claimed already is refused.
 */
describe('SQLite store: claims ahead of the due time', () => {
  let store: SqliteStore;

  beforeEach(async () => {
    store = new SqliteStore(':memory:');
    await store.open(1);
  });
  afterEach(() => store.close());

  it('claims a SCHEDULED task due by `until`: RUNNING, attempt 1, no start, lease from its due time; not one due later', async () => {
    await store.insertTasks([waitingTask('soon', T0 + 500, T0), waitingTask('later', T0 + 5000, T0)]);
    const claimed = await store.claimTasksAhead(['soon', 'later'], 'w1', T0, T0 + 1000, LEASE);
    expect(claimed.map((t) => [t.id, t.attempt, t.startedAt, t.dueAt])).to.deep.equal([['soon', 1, T0 + 500, T0 + 500]]);
    const soon = await store.getTask('soon');
    expect(soon?.state).to.equal('RUNNING');
    expect(soon?.startedAt).to.equal(null);
    expect(soon?.workerId).to.equal('w1');
    expect((await store.findExpiredLeases(T0 + 500 + LEASE - 1, 10)).map((l) => l.taskId)).to.deep.equal([]);
    expect((await store.findExpiredLeases(T0 + 500 + LEASE + 1, 10)).map((l) => l.taskId)).to.deep.equal(['soon']);
    expect((await store.getTask('later'))?.state).to.equal('SCHEDULED');
  });

  it('refuses a cancelled task and one claimed already (one attempt number handed out once)', async () => {
    await store.insertTasks([waitingTask('a', T0 + 100, T0), waitingTask('b', T0 + 100, T0)]);
    await store.cancelTask('a', T0);
    expect((await store.claimTasksAhead(['a', 'b'], 'w1', T0, T0 + 1000, LEASE)).map((t) => t.id)).to.deep.equal(['b']);
    expect(await store.claimTasksAhead(['b'], 'w2', T0, T0 + 1000, LEASE)).to.deep.equal([]);
    expect(await store.claimTasks(['b'], 'w2', T0 + 100, LEASE)).to.deep.equal([]);
  });

  it('start-up recovery: an attempt claimed ahead and never sent is retried free at its due time, one that ran as worker_lost', async () => {
    await store.insertTasks([waitingTask('held', T0 + 60_000, T0), waitingTask('ran', T0, T0)]);
    await store.claimTasksAhead(['held'], 'w1', T0, T0 + 60_000, LEASE);
    await store.claimTasks(['ran'], 'w1', T0, LEASE);
    const orphans = await store.findOrphanedAttempts(10);
    expect(orphans.map((o) => [o.taskId, o.neverStartedDueAt])).to.deep.equal([
      ['held', T0 + 60_000],
      ['ran', undefined],
    ]);
    const now = T0 + 1000; // the service restarted a second later
    await store.completeAttempts(
      orphans.map((o) => lostAttemptCompletion(o, now, 'process stopped during the attempt')),
      now,
    );
    const held = await store.getTask('held');
    expect([held?.state, held?.dueAt, held?.retry.attemptBase, held?.error?.type]).to.deep.equal([
      'RETRYING',
      T0 + 60_000,
      1,
      'worker_recycled',
    ]);
    const ran = await store.getTask('ran');
    expect(ran?.error?.type).to.equal('worker_lost');
  });

  it('the completion writes the start it carries where the row has none; a claimed-at-due row keeps its own', async () => {
    await store.insertTasks([waitingTask('ahead', T0 + 100, T0), waitingTask('due', T0, T0), waitingTask('retry', T0 + 100, T0)]);
    const [ahead] = await store.claimTasksAhead(['ahead'], 'w1', T0, T0 + 1000, LEASE);
    const [due] = await store.claimTasks(['due'], 'w1', T0 + 5, LEASE);
    const [retry] = await store.claimTasksAhead(['retry'], 'w1', T0, T0 + 1000, LEASE);
    const base = { retryAt: null, result: null, error: null, durationMs: 3 };
    await store.completeAttempts(
      [
        { taskId: 'ahead', attempt: ahead.attempt, seq: ahead.seq, state: 'SUCCEEDED', ...base, startedAt: T0 + 120 },
        { taskId: 'due', attempt: due.attempt, seq: due.seq, state: 'SUCCEEDED', ...base, startedAt: T0 + 999 },
        {
          taskId: 'retry',
          attempt: retry.attempt,
          state: 'RETRYING',
          ...base,
          retryAt: T0 + 60_000,
          error: { message: 'x', type: 'Error', retryable: true },
          startedAt: T0 + 130,
        },
      ],
      T0 + 200,
    );
    expect((await store.getTask('ahead'))?.startedAt).to.equal(T0 + 120);
    expect((await store.getTask('due'))?.startedAt).to.equal(T0 + 5);
    const attempts = await store.getAttempts('retry');
    expect(attempts.map((a) => a.startedAt)).to.deep.equal([T0 + 130]);
  });
});
