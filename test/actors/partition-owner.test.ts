import { expect } from 'chai';
import { PartitionOwnerActor } from '../../src/actors/owner/partition-owner';
import { ManualClock } from '../../src/domain/clock';
import { DueEntry, NewTask } from '../../src/domain/task';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store';
import { PartitionFences } from '../../src/cluster/partition-fences';
import { StoreUnavailableError } from '../../src/domain/errors';
import { actorDeps, settle, waitingTask, routerWith } from '../helpers/actor-deps';

const T0 = Date.UTC(2026, 5, 1, 12, 0, 0);

function task(id: string, dueAt: number, state: 'SCHEDULED' | 'PENDING' = 'SCHEDULED'): NewTask {
  return waitingTask(id, dueAt, T0, { state });
}

/** The partition owner driven by a manual clock: one timer, never early, window refresh, credits. */
describe('PartitionOwnerActor with a manual clock', () => {
  let store: SqliteStore;
  let clock: ManualClock;
  let owner: PartitionOwnerActor;
  let enqueued: DueEntry[];
  /** `enqueue` messages the owner sent. */
  let enqueueMessages: number;

  async function makeOwner(
    overrides: Record<string, unknown> = {},
    lease?: { epoch: number; fences: PartitionFences },
    partition = 0,
  ): Promise<void> {
    const router = routerWith({
      dispatcher: {
        tell: (_topic: string, entries: DueEntry[]) => {
          enqueueMessages++;
          enqueued.push(...entries);
        },
      } as never,
      owners: [],
    });
    const deps = actorDeps({ store, clock, router, overrides: { partitions: 1, horizonMs: 30_000, ...overrides }, fences: lease?.fences });
    owner = new PartitionOwnerActor(deps);
    owner.initialize({ getCustomParameters: () => (lease ? { partition, epoch: lease.epoch } : { partition }) } as never);
  }

  beforeEach(async () => {
    store = new SqliteStore(':memory:');
    await store.open(1);
    clock = new ManualClock(T0);
    enqueued = [];
    enqueueMessages = 0;
  });
  afterEach(async () => {
    owner?.stop();
    expect(clock.pendingTimers(), 'timers left behind').to.equal(0);
    await store.close();
  });

  it('holds one timer for the earliest due task, hands it out exactly at its time, and marks it PENDING if still held after dueMarkDelayMs', async () => {
    await store.insertTasks([task('a', T0 + 1000), task('b', T0 + 5000)]);
    await makeOwner({ dueMarkDelayMs: 1000 });
    await owner.start();
    await settle();
    await settle();
    expect(enqueued).to.deep.equal([]);
    expect(clock.pendingTimers()).to.equal(1);
    clock.advance(999);
    await settle();
    expect(enqueued).to.deep.equal([]);
    clock.advance(1);
    await settle();
    expect(enqueued.map((e) => e.id)).to.deep.equal(['a']);
    // The mark waits (a claim would take the due task directly): one timer for b, one for the marks.
    expect((await store.getTask('a'))?.state).to.equal('SCHEDULED');
    expect(clock.pendingTimers()).to.equal(2);
    clock.advance(1000);
    await settle();
    expect((await store.getTask('a'))?.state).to.equal('SCHEDULED');
    clock.advance(1000); // between one and two delays after the hand-out
    await settle();
    expect((await store.getTask('a'))?.state).to.equal('PENDING');
    expect((await store.getTask('b'))?.state).to.equal('SCHEDULED');
    expect(clock.pendingTimers()).to.equal(1);
  });

  it('never marks a task the dispatcher released (claimed) within the delay; marks the one it still holds', async () => {
    await store.insertTasks([task('a', T0 + 1000), task('b', T0 + 1000)]);
    await makeOwner({ dueMarkDelayMs: 500 });
    await owner.start();
    await settle();
    clock.advance(1000);
    await settle();
    expect(enqueued.map((e) => e.id)).to.deep.equal(['a', 'b']);
    expect(await store.claimTasks(['a'], 'w', clock.now(), 60_000)).to.have.length(1);
    owner.released(['a']);
    clock.advance(1000);
    await settle();
    expect((await store.getTask('a'))?.state).to.equal('RUNNING');
    expect((await store.getTask('b'))?.state).to.equal('PENDING');
  });

  it('stopped while it refreshes its window: hands nothing out and arms no timer', async () => {
    await makeOwner();
    await owner.start();
    await settle();
    // Stored without an offer: the owner finds it only at its window refresh (now + horizon / 2).
    await store.insertTasks([task('a', T0 + 15_000)]);
    const real = store.loadDue.bind(store);
    let finish: () => void = () => undefined;
    (owner as unknown as { deps: { store: { loadDue: typeof real } } }).deps.store = Object.assign(Object.create(store), {
      loadDue: (...args: Parameters<typeof real>) =>
        new Promise<Awaited<ReturnType<typeof real>>>((resolve) => (finish = () => void real(...args).then(resolve))),
    });
    clock.advance(15_000); // the refresh starts its read…
    await settle();
    owner.stop(); // …and the owner is stopped before the read returns
    finish();
    await settle();
    expect(enqueued).to.deep.equal([]);
    expect(clock.pendingTimers()).to.equal(0);
  });

  it('hands out a task offered while its window read is still outstanding, then what the read found', async () => {
    await makeOwner();
    await owner.start();
    await settle();
    // Stored without an offer: the owner finds it only at its window refresh (now + horizon / 2).
    await store.insertTasks([task('found', T0 + 15_000), task('offered', T0 + 15_000, 'PENDING')]);
    const real = store.loadDue.bind(store);
    let finish: () => void = () => undefined;
    let reads = 0;
    (owner as unknown as { deps: { store: { loadDue: typeof real } } }).deps.store = Object.assign(Object.create(store), {
      loadDue: (...args: Parameters<typeof real>) => {
        reads++;
        return new Promise<Awaited<ReturnType<typeof real>>>((resolve) => (finish = () => void real(...args).then(resolve)));
      },
    });
    clock.advance(15_000); // the refresh starts its read and it does not answer yet
    for (let i = 0; i < 5; i++) await settle();
    expect(reads).to.equal(1);
    expect(clock.pendingTimers(), 'no timer spinning while the read is out').to.equal(0);
    owner.offer([
      { id: 'offered', partition: 0, seq: 2, dueAt: T0 + 15_000, priority: 'medium', tenantId: 'B', taskType: 'noop', state: 'PENDING' },
    ]);
    for (let i = 0; i < 5; i++) await settle();
    expect(enqueued.map((e) => e.id)).to.deep.equal(['offered']);
    finish();
    for (let i = 0; i < 5; i++) await settle();
    expect(enqueued.map((e) => e.id)).to.deep.equal(['offered', 'found']);
    expect(reads).to.equal(1);
  });

  it('a store away at its window refresh: the read is tried again once a second, not in a loop; the task fires once it answers', async () => {
    await makeOwner();
    await owner.start();
    await settle();
    await store.insertTasks([task('a', T0 + 15_000)]);
    const real = store.loadDue.bind(store);
    let away = true;
    let reads = 0;
    (owner as unknown as { deps: { store: { loadDue: typeof real } } }).deps.store = Object.assign(Object.create(store), {
      loadDue: (...args: Parameters<typeof real>) => {
        reads++;
        return away ? Promise.reject(new StoreUnavailableError('connection_lost', 'pg', 'ECONNREFUSED', true)) : real(...args);
      },
    });
    clock.advance(15_000); // the refresh fails…
    for (let i = 0; i < 20; i++) await settle();
    expect(reads).to.equal(1);
    clock.advance(999);
    await settle();
    expect(reads).to.equal(1);
    clock.advance(1); // …and is tried again a second later
    for (let i = 0; i < 5; i++) await settle();
    expect(reads).to.equal(2);
    away = false;
    clock.advance(1000);
    for (let i = 0; i < 5; i++) await settle();
    expect(reads).to.equal(3);
    expect(enqueued.map((e) => e.id)).to.deep.equal(['a']);
  });

  it('dueMarkDelayMs 0 marks at the hand-out', async () => {
    await store.insertTasks([task('a', T0 + 1000)]);
    await makeOwner({ dueMarkDelayMs: 0 });
    await owner.start();
    await settle();
    clock.advance(1000);
    await settle();
    expect(enqueued.map((e) => e.id)).to.deep.equal(['a']);
    expect((await store.getTask('a'))?.state).to.equal('PENDING');
  });

  it('never hands out early when the clock goes backwards', async () => {
    await store.insertTasks([task('a', T0 + 1000)]);
    await makeOwner();
    await owner.start();
    await settle();
    clock.advance(900);
    clock.set(T0 - 60_000); // NTP step back by a minute
    await settle();
    clock.advance(60_000 + 999); // back to T0 + 999: the timer fires, but the task is not due
    await settle();
    expect(enqueued).to.deep.equal([]);
    clock.advance(1);
    await settle();
    expect(enqueued.map((e) => e.id)).to.deep.equal(['a']);
  });

  it('a step of the wall clock back, then right again: the task is handed out within a second of its time, not a step later', async () => {
    await store.insertTasks([task('a', T0 + 20_000)]);
    await makeOwner();
    await owner.start();
    await settle();
    clock.advance(5000);
    clock.step(-600_000); // a fast clock stepped back by NTP (timers keep their delays, as Node's do)
    await settle();
    for (let i = 0; i < 10; i++) {
      clock.advance(1000);
      await settle();
    }
    expect(enqueued).to.deep.equal([]);
    clock.step(600_000); // corrected again: T0 + 15 s
    await settle();
    for (let i = 0; i < 6; i++) {
      clock.advance(1000);
      await settle();
    }
    expect(enqueued.map((e) => e.id)).to.deep.equal(['a']); // by T0 + 21 s
  });

  it('reads tasks beyond the horizon only when the window is refreshed, and fires them on time', async () => {
    await store.insertTasks([task('far', T0 + 40_000)]);
    await makeOwner();
    await owner.start();
    await settle();
    expect(owner.stats().windowSize).to.equal(0);
    clock.advance(15_000); // refresh point: windowEnd − horizon/2
    await settle();
    expect(owner.stats().windowSize).to.equal(1);
    clock.advance(24_999);
    await settle();
    expect(enqueued).to.deep.equal([]);
    clock.advance(1);
    await settle();
    expect(enqueued.map((e) => e.id)).to.deep.equal(['far']);
  });

  it("staggers the owners' first windows over half a horizon, so their refreshes do not coincide", async () => {
    await makeOwner({ partitions: 4 }, undefined, 2);
    await owner.start();
    await settle();
    // Partition 2 of 4: the first window ends 2/4 of 15 s early; later ones a full horizon ahead.
    expect(owner.stats().windowEnd).to.equal(T0 + 30_000 - 7_500);
    clock.advance(7_500); // its refresh point: windowEnd − horizon/2
    await settle();
    expect(owner.stats().windowEnd).to.equal(T0 + 7_500 + 30_000);
  });

  it('takes a newly offered task due inside the window without reading the store', async () => {
    await makeOwner();
    await owner.start();
    await settle();
    await store.insertTasks([task('new', T0 + 2000)]);
    owner.offer([
      { id: 'new', partition: 0, seq: 1, dueAt: T0 + 2000, priority: 'medium', tenantId: 't', taskType: 'noop', state: 'SCHEDULED' },
    ]);
    await settle();
    clock.advance(2000);
    await settle();
    expect(enqueued.map((e) => e.id)).to.deep.equal(['new']);
  });

  it('hands out at most ownerMaxOutstanding tasks until the dispatcher releases them', async () => {
    await store.insertTasks(['a', 'b', 'c', 'd', 'e'].map((id) => task(id, T0, 'PENDING')));
    await makeOwner({ ownerMaxOutstanding: 2 });
    await owner.start();
    await settle();
    await settle();
    expect(enqueued.map((e) => e.id)).to.deep.equal(['a', 'b']);
    owner.released(['a', 'b']);
    await settle();
    expect(enqueued.map((e) => e.id)).to.deep.equal(['a', 'b', 'c', 'd']);
  });

  it('takes in every message of one turn before it hands out: 40 releases in one turn → one enqueue message', async () => {
    await store.insertTasks(Array.from({ length: 80 }, (_, i) => task(`t${String(i).padStart(2, '0')}`, T0, 'PENDING')));
    await makeOwner({ ownerMaxOutstanding: 40 });
    await owner.start();
    await settle();
    expect([enqueueMessages, enqueued.length]).to.deep.equal([1, 40]);
    // The dispatcher's claims answered together release one entry each, in one turn.
    for (const e of enqueued.slice(0, 40)) owner.released([e.id]);
    await settle();
    expect(enqueueMessages).to.equal(2);
    expect(enqueued.map((e) => e.id)).to.deep.equal(Array.from({ length: 80 }, (_, i) => `t${String(i).padStart(2, '0')}`));
  });

  it('a task cancelled before its time stays CANCELLED: its due mark and its claim change nothing', async () => {
    await store.insertTasks([task('x', T0 + 1000), task('y', T0 + 1000)]);
    await makeOwner();
    await owner.start();
    await settle();
    await store.cancelTask('x', T0 + 10);
    clock.advance(1000);
    await settle();
    clock.advance(2000); // both are still held: their marks are written (x's changes nothing)
    await settle();
    // Handed out with the rest (the owner does not wait for the mark); the dispatcher's claim is
    // refused and it releases the entry like any other.
    expect(enqueued.map((e) => e.id)).to.deep.equal(['x', 'y']);
    expect((await store.getTask('x'))?.state).to.equal('CANCELLED');
    expect((await store.getTask('y'))?.state).to.equal('PENDING');
    expect(await store.claimTasks(['x', 'y'], 'w', clock.now(), 1000)).to.have.length(1);
    expect((await store.getTask('x'))?.state).to.equal('CANCELLED');
    owner.released(['x', 'y']);
    expect(owner.stats().outstanding).to.equal(0);
  });

  it('memory follows the window: a partition with many waiting tasks keeps at most windowMaxTasks', async () => {
    await store.insertTasks(Array.from({ length: 500 }, (_, i) => task(`t${i}`, T0 + 1000 + i)));
    await makeOwner({ windowMaxTasks: 50, ownerMaxOutstanding: 1000 });
    await owner.start();
    await settle();
    expect(owner.stats().windowSize).to.equal(50);
    clock.advance(2000);
    // Each pump is asynchronous and re-arms the timer at "now": run those zero-delay timers.
    for (let i = 0; i < 50 && enqueued.length < 500; i++) {
      await settle();
      clock.advance(0);
    }
    // drained in due order through repeated bounded reads
    expect(enqueued).to.have.length(500);
    expect(enqueued.map((e) => e.id)).to.deep.equal(Array.from({ length: 500 }, (_, i) => `t${i}`));
  });

  it('workflow: a released task is handed out at once, or at its own later scheduled_at; BLOCKED ones never', async () => {
    const wfTask = (local: string, deps: string[], scheduledAt: number | null = null) => ({
      ...task(`wf.${local}`, scheduledAt ?? T0, 'PENDING'),
      scheduledAt,
      state: deps.length === 0 ? ('PENDING' as const) : ('BLOCKED' as const),
      workflowTaskId: local,
      dependsOn: deps.map((d) => `wf.${d}`),
    });
    await store.insertWorkflow({
      id: 'wf',
      workflowName: null,
      tenantId: 't',
      metadata: {},
      createdAt: T0,
      tasks: [wfTask('a', []), wfTask('now', ['a']), wfTask('later', ['a'], T0 + 5000)],
    });
    await makeOwner();
    await owner.start();
    await settle();
    expect(enqueued.map((e) => e.id)).to.deep.equal(['wf.a']);
    const [claimed] = await store.claimTasks(['wf.a'], 'w', T0, 60_000);
    owner.released(['wf.a']);
    const [done] = await store.completeAttempts(
      [{ taskId: 'wf.a', attempt: claimed.attempt, state: 'SUCCEEDED', retryAt: null, result: null, error: null, durationMs: 1 }],
      clock.now(),
    );
    owner.offer(done.released ?? []); // what the dispatcher does with them
    await settle();
    expect(enqueued.map((e) => e.id)).to.deep.equal(['wf.a', 'wf.now']);
    clock.advance(4_999);
    await settle();
    expect(enqueued.map((e) => e.id)).to.deep.equal(['wf.a', 'wf.now']);
    clock.advance(1);
    await settle();
    expect(enqueued.map((e) => e.id)).to.deep.equal(['wf.a', 'wf.now', 'wf.later']);
    clock.advance(2000); // still held by the dispatcher: marked
    await settle();
    expect((await store.getTask('wf.later'))?.state).to.equal('PENDING');
  });

  describe('cluster mode (a leased partition)', () => {
    it('fires with its lease epoch, and stops at once when its lease is no longer held', async () => {
      await store.insertTasks([task('a', T0 + 1000), task('b', T0 + 2000)]);
      const fences = new PartitionFences();
      fences.grant(0, 3);
      await store.fencePartition(0, 3);
      await makeOwner({}, { epoch: 3, fences });
      await owner.start();
      await settle();
      clock.advance(1000);
      await settle();
      expect(enqueued.map((e) => e.id)).to.deep.equal(['a']);
      // the lease ends (renewal refused, or its deadline passed): the fence is revoked first
      fences.revoke(0);
      clock.advance(1000);
      await settle();
      expect(enqueued.map((e) => e.id)).to.deep.equal(['a']);
      expect((await store.getTask('b'))?.state).to.equal('SCHEDULED');
      expect(clock.pendingTimers()).to.equal(0);
    });

    it('an owner with a stale epoch changes nothing the store has fenced for a newer one', async () => {
      await store.insertTasks([task('a', T0 + 1000)]);
      const fences = new PartitionFences();
      fences.grant(0, 1); // this process still believes it holds epoch 1 (e.g. it was stopped)
      await store.fencePartition(0, 2); // meanwhile another member acquired epoch 2
      await makeOwner({}, { epoch: 1, fences });
      await owner.start();
      await settle();
      clock.advance(1000);
      await settle();
      // The owner hands it to its dispatcher, whose claim carries the same stale token: refused.
      expect(await store.claimTasks(['a'], 'w', clock.now(), 1000, [fences.epochOf(0) ?? -1])).to.deep.equal([]);
      expect((await store.getTask('a'))?.state).to.equal('SCHEDULED');
    });
  });
});
