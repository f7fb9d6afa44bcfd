import { expect } from 'chai';
import pino from 'pino';
import { AttemptWatchdog, FinishedAttempt, RunningAttempt, WatchdogHost } from '../../src/actors/dispatcher/attempt-watchdog';
import type { WorkerPool, WorkerSlot } from '../../src/actors/dispatcher/worker-pool';
import type { Config } from '../../src/config';
import { ManualClock } from '../../src/domain/clock';
import { ClaimedTask } from '../../src/domain/task';
import { AttemptCompletion, OrphanedAttempt, Store } from '../../src/storage/store';
import { StoreHealth } from '../../src/storage/store-health';

const flush = () => new Promise((r) => setImmediate(r));
const RETRY = {
  maxRetries: 3,
  backoff: 'fixed',
  delaySeconds: 1,
  maxDelaySeconds: null,
  jitter: null,
  base: 2,
} as unknown as ClaimedTask['retry'];

function running(id: string, workerId: string, startedAt: number, attempt = 1): RunningAttempt {
  const task = {
    id,
    attempt,
    taskType: 'noop',
    payload: null,
    timeoutSeconds: 1,
    idempotencyKey: null,
    dueAt: startedAt,
    retry: RETRY,
    partition: 0,
    tenantId: 'default',
    startedAt,
  };
  return { task: task as ClaimedTask, workerId };
}

/** A watchdog over a fake host and store (leaseMs 1,000: sweep every 500 ms; grace 200: check every 100 ms). */
function fixture(expired: OrphanedAttempt[] = [], hasExternal = false) {
  const clock = new ManualClock();
  const run = new Map<string, RunningAttempt>();
  const killed: string[] = [];
  const finished: FinishedAttempt[][] = [];
  const orphans: AttemptCompletion[][] = [];
  let draining = false;
  /** Task ids whose completion the recorder keeps for the store. */
  const unwritten = new Set<string>();
  const slots = new Map<string, WorkerSlot>([['worker-1', { id: 'worker-1', pid: 11, credits: 0 } as WorkerSlot]]);
  const workers = { get: (id: string) => slots.get(id), kill: (slot: WorkerSlot) => killed.push(slot.id) } as unknown as WorkerPool;
  const host: WatchdogHost = {
    running: run,
    workers,
    draining: () => draining,
    hasExternal,
    finish: async (results) => {
      finished.push(results);
      for (const r of results) run.delete(r.id);
    },
    unwritten: (taskId) => unwritten.has(taskId),
    recordOrphans: async (completions) => {
      orphans.push(completions);
    },
  };
  const health = new StoreHealth();
  const store = { findExpiredLeases: async () => expired, health } as unknown as Store;
  const config = { leaseMs: 1000, timeoutGraceMs: 200 } as Config;
  const watchdog = new AttemptWatchdog({ clock, config, store, log: pino({ level: 'silent' }) }, host);
  return { clock, run, killed, finished, orphans, watchdog, unwritten, health, drain: () => (draining = true) };
}

describe('AttemptWatchdog (manual clock)', () => {
  it('overrun: an attempt past timeout + grace kills its worker; it ends as timeout, its neighbour as worker_lost', async () => {
    const f = fixture();
    f.run.set('stuck', running('stuck', 'worker-1', f.clock.now()));
    f.run.set('fine', running('fine', 'worker-1', f.clock.now() + 1000));
    f.watchdog.attemptsStarted();
    f.clock.advance(1100); // 1 s timeout + 200 ms grace not yet over
    expect(f.killed).to.deep.equal([]);
    f.clock.advance(100);
    expect(f.killed).to.deep.equal(['worker-1']);
    const [results] = f.finished;
    expect(results.find((r) => r.id === 'stuck')?.outcome).to.deep.include({ errorType: 'timeout', permanent: false });
    expect(results.find((r) => r.id === 'fine')?.outcome).to.deep.include({ errorType: 'worker_lost', permanent: false });
    f.watchdog.stop();
  });

  it('lease sweep: a lease expired on an attempt this dispatcher runs kills its worker; others are orphans recorded as worker_lost', async () => {
    const expired: OrphanedAttempt[] = [
      { taskId: 'mine', attempt: 2, retry: RETRY, workerId: 'worker-1' },
      { taskId: 'gone', attempt: 1, retry: RETRY, workerId: 'worker-9' },
      // the dispatcher runs attempt 2 of this task: attempt 1's lease is an orphan's
      { taskId: 'old', attempt: 1, retry: RETRY, workerId: 'worker-1' },
    ];
    const f = fixture(expired);
    f.run.set('mine', running('mine', 'worker-1', f.clock.now(), 2));
    f.run.set('old', running('old', 'worker-1', f.clock.now(), 2));
    f.watchdog.start();
    f.clock.advance(500);
    await flush();
    expect(f.killed).to.deep.equal(['worker-1']);
    expect(f.finished[0].map((r) => r.id).sort()).to.deep.equal(['mine', 'old']);
    expect(f.orphans).to.have.length(1);
    expect(f.orphans[0].map((c) => [c.taskId, c.attempt])).to.deep.equal([
      ['gone', 1],
      ['old', 1],
    ]);
    f.watchdog.stop();
  });

  it("lease sweep with external queues: an external attempt's expired lease is left to its lane, and the other orphans are still recorded", async () => {
    const expired: OrphanedAttempt[] = [
      { taskId: 'ext', attempt: 1, retry: RETRY, workerId: 'external:manual' },
      { taskId: 'gone', attempt: 1, retry: RETRY, workerId: 'worker-9' },
    ];
    const f = fixture(expired, true);
    f.watchdog.start();
    f.clock.advance(500);
    await flush();
    expect(f.killed).to.deep.equal([]);
    expect(f.orphans.map((b) => b.map((c) => c.taskId))).to.deep.equal([['gone']]);
    f.watchdog.stop();
  });

  it('lease sweep: an attempt whose completion waits in memory for the store (a full disk) is not an orphan: never run again', async () => {
    const expired: OrphanedAttempt[] = [
      { taskId: 'done', attempt: 1, retry: RETRY, workerId: 'worker-1' },
      { taskId: 'gone', attempt: 1, retry: RETRY, workerId: 'worker-9' },
    ];
    const f = fixture(expired);
    f.unwritten.add('done');
    f.watchdog.start();
    f.clock.advance(500);
    await flush();
    expect(f.killed).to.deep.equal([]);
    expect(f.orphans.map((b) => b.map((c) => c.taskId))).to.deep.equal([['gone']]);
    f.watchdog.stop();
  });

  it('no lease is judged while the store has a fault, nor for one lease after it ended (heartbeats renew them first)', async () => {
    const f = fixture([{ taskId: 'mine', attempt: 1, retry: RETRY, workerId: 'worker-1' }]);
    f.run.set('mine', running('mine', 'worker-1', f.clock.now()));
    f.watchdog.start();
    f.health.report({ kind: 'disk_full', target: 'x.db', cause: 'SQLITE_FULL', recoverable: true, since: f.clock.now() });
    for (let i = 0; i < 6; i++) {
      f.clock.advance(500);
      await flush();
    }
    expect(f.killed).to.deep.equal([]);
    f.health.recovered();
    f.clock.advance(500);
    await flush();
    expect(f.killed).to.deep.equal([]); // 500 ms after the fault: still within one lease (1,000 ms)
    f.clock.advance(500);
    await flush();
    expect(f.killed).to.deep.equal(['worker-1']); // a lease expired one lease after the fault is judged again
    f.watchdog.stop();
  });

  it('the lease sweep re-arms until the dispatcher drains; stop() clears both timers', async () => {
    const f = fixture([{ taskId: 'gone', attempt: 1, retry: RETRY, workerId: 'worker-9' }]);
    f.watchdog.start();
    f.clock.advance(500);
    await flush();
    f.clock.advance(500);
    await flush();
    expect(f.orphans).to.have.length(2);
    f.drain();
    f.clock.advance(500);
    await flush();
    f.clock.advance(5000);
    await flush();
    expect(f.orphans).to.have.length(3); // the sweep armed before the drain ran once more, then none

    const g = fixture([{ taskId: 'gone', attempt: 1, retry: RETRY, workerId: 'worker-9' }]);
    g.run.set('stuck', running('stuck', 'worker-1', g.clock.now()));
    g.watchdog.start();
    g.watchdog.attemptsStarted();
    g.watchdog.stop();
    g.clock.advance(10_000);
    await flush();
    expect(g.orphans).to.deep.equal([]);
    expect(g.killed).to.deep.equal([]);
  });
});
