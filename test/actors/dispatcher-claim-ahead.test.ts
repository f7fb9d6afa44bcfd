import { expect } from 'chai';
import { DispatcherActor } from '../../src/actors/dispatcher/dispatcher';
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
import { fakeWorkers, RecordedRun } from '../helpers/fake-workers';
import type { RestartCause, WorkerSlot } from '../../src/actors/dispatcher/worker-pool';

const T0 = Date.UTC(2026, 5, 1, 12, 0, 0);
const DUE = T0 + 500;

/**
 * Claiming ahead (`claimAheadMs`), on a manual clock, an in-memory store and fake workers: tasks
 * handed out before their due time are claimed at once and held; no `run` message goes out before
 * the due time; the start written is the instant each was sent; a cancel or a replaced worker
 * ends a held attempt without it ever starting; a task with a rate limit is not claimed ahead.
 */
describe('DispatcherActor: claims ahead of the due time', () => {
  let store: SqliteStore;
  let dispatcher: DispatcherActor;
  let clock: ManualClock;

  beforeEach(async () => ({ store, clock } = await memoryStoreAndClock(T0)));
  afterEach(() => closeDispatcherAndStore(dispatcher, store));

  /** SCHEDULED tasks due at DUE and a dispatcher over 2 fake workers × `slots` slots, claiming 1 s ahead. */
  async function rig(ids: string[], slots = 4, overrides: Record<string, unknown> = {}) {
    await store.insertTasks(ids.map((id) => waitingTask(id, DUE, T0)));
    const released: string[] = [];
    const owner = { tell: (name: string, ids: unknown) => void (name === 'released' && released.push(...(ids as string[]))) };
    const router = routerWith({ owners: [owner as never] });
    const deps = actorDeps({
      store,
      clock,
      router,
      overrides: { partitions: 1, workers: 2, workerConcurrency: slots, claimAheadMs: 1000, ...overrides },
    });
    const runs: RecordedRun[] = [];
    let workers: ReturnType<typeof fakeWorkers> | undefined;
    let restarted: ((slot: WorkerSlot, exit: null, cause: RestartCause) => void) | undefined;
    dispatcher = new DispatcherActor(deps, (spec, onRestart) => {
      restarted = onRestart;
      return (workers = fakeWorkers(spec, runs));
    });
    const entries = dueEntries(ids, DUE, 'SCHEDULED');
    dispatcher.enqueue(entries);
    await settle();
    const sent = () => runs.flatMap((r) => r.ids);
    const row = (id: string) => store.getTask(id);
    /** `workerId` reports these attempts succeeded, 5 ms on. */
    const succeed = async (workerId: string, ids: string[]) => {
      clock.advance(5);
      const slot = workers?.slots.find((s) => s.id === workerId);
      await dispatcher.completed({
        workerId,
        pid: slot?.pid ?? -1,
        results: ids.map((id) => ({ id, attempt: 1, outcome: { kind: 'succeeded', result: null }, durationMs: 5 }) as const),
      });
      await settle();
    };
    const restart = (workerId: string) => restarted?.(workers?.slots.find((s) => s.id === workerId) as WorkerSlot, null, 'crashed');
    return { runs, sent, row, deps, succeed, restart, released, slots: () => workers?.slots ?? [] };
  }

  it('claims at once, sends nothing before the due time, sends at it; the start written is the send instant', async () => {
    const r = await rig(['a', 'b', 'c']);
    expect(r.sent()).to.deep.equal([]);
    expect((await r.row('a'))?.state).to.equal('RUNNING');
    expect((await r.row('a'))?.startedAt).to.equal(null);
    clock.advance(499);
    await settle();
    expect(r.sent()).to.deep.equal([]);
    clock.advance(1);
    await settle();
    expect(r.sent().sort()).to.deep.equal(['a', 'b', 'c']);
    const run = r.runs[0];
    clock.advance(7);
    await dispatcher.completed({
      workerId: run.workerId,
      pid: r.slots().find((s) => s.id === run.workerId)?.pid ?? -1,
      results: run.ids.map((id) => ({ id, attempt: 1, outcome: { kind: 'succeeded', result: null }, durationMs: 7 }) as const),
    });
    await settle();
    const done = await r.row(run.ids[0]);
    expect(done?.state).to.equal('SUCCEEDED');
    expect(done?.startedAt).to.equal(DUE);
  });

  it('held attempts wait for free slots: no worker gets more than its slots', async () => {
    const r = await rig(['a', 'b', 'c', 'd', 'e', 'f'], 1);
    clock.advance(500);
    await settle();
    expect(r.sent()).to.have.length(2); // 2 workers × 1 slot
    expect(r.slots().map((s) => s.credits)).to.deep.equal([0, 0]);
    // Due and waiting for a slot: a slot coming back sends the next one of that worker's.
    const first = r.runs[0];
    await r.succeed(first.workerId, first.ids);
    expect(r.runs).to.have.length(3);
    expect(r.runs[2].workerId).to.equal(first.workerId);
    expect((await r.row(r.runs[2].ids[0]))?.state).to.equal('RUNNING');
  });

  it('a worker replaced before its held attempts were sent: they are retried free at their due time, never earlier', async () => {
    const r = await rig(['a', 'b', 'c', 'd']);
    const holder = (await r.row('a'))?.workerId as string;
    const heldThere: string[] = [];
    for (const id of ['a', 'b', 'c', 'd']) if ((await r.row(id))?.workerId === holder) heldThere.push(id);
    r.restart(holder);
    await settle();
    for (const id of heldThere) {
      const t = await r.row(id);
      expect(t?.state, id).to.equal('RETRYING');
      expect(t?.dueAt, id).to.equal(DUE);
      expect(t?.error?.type, id).to.equal('worker_recycled');
      expect(t?.retry.attemptBase, id).to.equal(1); // not counted
    }
    expect(r.sent()).to.deep.equal([]);
  });

  it('a drain sends no held attempt: each is retried free at its due time, and the drain ends at once', async () => {
    const r = await rig(['a', 'b']);
    const { stillRunning } = await dispatcher.drain({ graceMs: 10_000 });
    expect(stillRunning).to.equal(0);
    await settle();
    for (const id of ['a', 'b']) {
      const t = await r.row(id);
      expect(t?.state, id).to.equal('RETRYING');
      expect(t?.dueAt, id).to.equal(DUE);
      expect(t?.retry.attemptBase, id).to.equal(1); // not counted
    }
    clock.advance(500);
    await settle();
    expect(r.sent()).to.deep.equal([]);
  });

  it('a cancel of a held attempt ends it CANCELLED; it is never sent', async () => {
    const r = await rig(['a', 'b']);
    await store.cancelTask('a', T0 + 10); // RUNNING: a cancel request, then the abort message
    dispatcher.abort({ taskId: 'a', attempt: 1 });
    await settle();
    expect((await r.row('a'))?.state).to.equal('CANCELLED');
    clock.advance(500);
    await settle();
    expect(r.sent()).to.deep.equal(['b']);
  });

  it("a held attempt's lease goes with the heartbeat of the worker it is held for", async () => {
    const r = await rig(['a', 'b', 'c'], 1);
    clock.advance(500);
    await settle();
    const held = ['a', 'b', 'c'].find((id) => !r.sent().includes(id)) as string;
    const holder = (await r.row(held))?.workerId as string;
    const runningThere = r.runs.find((run) => run.workerId === holder)?.ids ?? [];
    const other = r.runs.find((run) => run.workerId !== holder)?.ids ?? [];
    clock.advance(100);
    const slot = r.slots().find((s) => s.id === holder);
    await dispatcher.heartbeat({ workerId: holder, pid: slot?.pid ?? -1, attempts: runningThere.map((id) => ({ id, attempt: 1 })) });
    // Leases were due + leaseMs (30 s); the beat (at due + 100 ms) moved those of the worker's running and held attempts on.
    const expired = (await store.findExpiredLeases(DUE + 30_050, 10)).map((l) => l.taskId);
    expect(expired).to.deep.equal(other);
  });

  it('a herd larger than the workers may hold: the rest is claimed the usual way at the due time, not ahead after it', async () => {
    // 2 workers × 2 slots hold at most 8 × 2 each: 32 of the 40 are claimed ahead.
    const ids = Array.from({ length: 40 }, (_, i) => `t${String(i).padStart(2, '0')}`);
    const r = await rig(ids, 2);
    const before = await Promise.all(ids.map((id) => r.row(id)));
    const rest = ids.filter((_, i) => before[i]?.state === 'SCHEDULED');
    expect(rest).to.have.length(8);
    expect(before.filter((t) => t?.state === 'RUNNING' && t.startedAt === null)).to.have.length(32);
    clock.advance(499);
    await settle();
    expect((await Promise.all(rest.map((id) => r.row(id)))).map((t) => t?.state)).to.deep.equal(rest.map(() => 'SCHEDULED'));
    clock.advance(1);
    await settle();
    // At the due time each worker's 2 free slots go half to its held attempts, half to the ready
    // queues, where the rest now waits: 2 of the rest are claimed as any due task is (the claim
    // writes the start); none of them is claimed ahead (RUNNING with no start).
    const sentRest = r.sent().filter((id) => rest.includes(id));
    expect(sentRest).to.have.length(2);
    for (const id of rest) {
      const t = await r.row(id);
      if (sentRest.includes(id)) expect([t?.state, t?.startedAt], id).to.deep.equal(['RUNNING', DUE]);
      else expect(t?.state, id).to.equal('SCHEDULED');
    }
    expect(r.sent()).to.have.length(4);
    // Completing what is sent, slot by slot, runs every task once: 40 runs, 40 SUCCEEDED, and
    // each id handed back to its owner once (by the claim ahead or by the usual claim).
    for (let i = 0; i < r.runs.length && i < 100; i++) await r.succeed(r.runs[i].workerId, r.runs[i].ids);
    expect([...r.sent()].sort()).to.deep.equal(ids);
    expect((await Promise.all(ids.map((id) => r.row(id)))).map((t) => t?.state)).to.deep.equal(ids.map(() => 'SUCCEEDED'));
    expect([...r.released].sort()).to.deep.equal(ids);
  });

  it('deals the claims a batch per worker in turn: the earliest due do not all go to the first worker', async () => {
    // 2 workers × 2 slots (16 held each), batches of 8 (workerBatchMax 1): 32 tasks due 1 ms apart.
    const r = await rig([], 2, { workerBatchMax: 1 });
    const ids = Array.from({ length: 32 }, (_, i) => `d${String(i).padStart(2, '0')}`);
    await store.insertTasks(ids.map((id, i) => waitingTask(id, DUE + i, T0)));
    dispatcher.enqueue(
      ids.map((id, i) => ({
        id,
        partition: 0,
        seq: i + 1,
        dueAt: DUE + i,
        priority: 'medium',
        tenantId: 't',
        taskType: 'noop',
        state: 'SCHEDULED',
      })),
    );
    await settle();
    const workerOf = async (id: string) => (await r.row(id))?.workerId as string;
    const holders = await Promise.all(ids.map(workerOf));
    expect(holders.every((w) => typeof w === 'string')).to.equal(true);
    // Batches in due order: 0–7 to one worker, 8–15 to the other, 16–23 to the first, 24–31 to the other.
    expect(new Set(holders.slice(0, 16)).size).to.equal(2);
    expect(new Set(holders.slice(0, 8)).size).to.equal(1);
    expect(holders[8]).not.to.equal(holders[0]);
    expect(holders[16]).to.equal(holders[0]);
  });

  it('a task under a rate limit is not claimed ahead: it waits in the store until due', async () => {
    const deps0 = await rig([]);
    deps0.deps.limits.setTypeLimit('noop', { ratePerSecond: 100, burst: 10 }, T0);
    await store.insertTasks([waitingTask('x', DUE, T0)]);
    dispatcher.enqueue([
      { id: 'x', partition: 0, seq: 1, dueAt: DUE, priority: 'medium', tenantId: 't', taskType: 'noop', state: 'SCHEDULED' },
    ]);
    await settle();
    expect((await store.getTask('x'))?.state).to.equal('SCHEDULED');
    clock.advance(500);
    await settle();
    expect(deps0.sent()).to.deep.equal(['x']);
  });
});
