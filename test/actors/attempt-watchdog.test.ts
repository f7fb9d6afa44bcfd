import { expect } from 'chai';
import pino from 'pino';
import { AttemptWatchdog, FinishedAttempt, lostOutcome, RunningAttempt, WatchdogHost } from '../../src/actors/dispatcher/attempt-watchdog';
import type { WorkerPool, WorkerSlot } from '../../src/actors/dispatcher/worker-pool';
import type { Config } from '../../src/config';
import { ManualClock } from '../../src/domain/clock';
import { StoreUnavailableError } from '../../src/domain/errors';
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

/** The fixture clock's start: its monotonic reading is the wall time since then (until a step). */
const CLOCK_START = Date.UTC(2026, 0, 1);

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
  return { task: task as ClaimedTask, workerId, startedMono: startedAt - CLOCK_START };
}

/** A watchdog over a fake host and store (leaseMs 1,000: sweep every 500 ms; grace 200: check every 100 ms). */
function fixture(
  expired: OrphanedAttempt[] = [],
  hasExternal = false,
  over: { findExpiredLeases?: () => Promise<OrphanedAttempt[]>; log?: pino.Logger } = {},
) {
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
    heldOutcome: () => undefined,
    unwritten: (taskId) => unwritten.has(taskId),
    recordOrphans: async (completions) => {
      orphans.push(completions);
    },
  };
  const health = new StoreHealth();
  const extended: Array<{ items: Array<{ taskId: string; attempt: number }>; until: number }> = [];
  const store = {
    findExpiredLeases: over.findExpiredLeases ?? (async () => expired),
    health,
    heartbeatAttempts: async (items: Array<{ taskId: string; attempt: number }>, until: number) => {
      extended.push({ items, until });
      return { extended: items.length, cancelRequested: [] };
    },
  } as unknown as Store;
  const config = { leaseMs: 1000, timeoutGraceMs: 200 } as Config;
  const watchdog = new AttemptWatchdog({ clock, config, store, log: over.log ?? pino({ level: 'silent' }) }, host);
  return { clock, run, killed, finished, orphans, extended, watchdog, unwritten, health, drain: () => (draining = true) };
}

describe('AttemptWatchdog (manual clock)', () => {
  it('overrun: an attempt past timeout + grace kills its worker; it is charged (timeout), its neighbour retried free (worker_recycled)', async () => {
    const f = fixture();
    f.run.set('stuck', running('stuck', 'worker-1', f.clock.now()));
    f.run.set('fine', running('fine', 'worker-1', f.clock.now() + 1000));
    f.watchdog.attemptsStarted();
    f.clock.advance(1100); // 1 s timeout + 200 ms grace not yet over
    expect(f.killed).to.deep.equal([]);
    f.clock.advance(100);
    expect(f.killed).to.deep.equal(['worker-1']);
    const [results] = f.finished;
    expect(results.find((r) => r.id === 'stuck')?.outcome).to.deep.equal({
      kind: 'failed',
      message: 'handler did not stop within 1 s + grace; its process was killed',
      errorType: 'timeout',
      permanent: false,
    });
    expect(results.find((r) => r.id === 'fine')?.outcome).to.deep.include({ errorType: 'worker_recycled', permanent: false, free: true });
    f.watchdog.stop();
  });

  it('a step of the wall clock moves no deadline: +1 h kills nothing early, −1 h spares nothing (the timeout counts on the monotonic clock)', async () => {
    const f = fixture();
    f.run.set('a', running('a', 'worker-1', f.clock.now()));
    f.watchdog.attemptsStarted();
    f.clock.advance(300);
    f.clock.step(3_600_000); // an NTP step forward, 300 ms into a 1 s timeout
    f.clock.advance(100);
    expect(f.killed, 'killed as overrun by a step forward').to.deep.equal([]);
    f.clock.advance(700); // 1.1 s run: within timeout + grace
    expect(f.killed).to.deep.equal([]);
    f.clock.advance(200); // 1.3 s: killed at the check of 1.2 s, timeout + grace
    expect(f.killed).to.deep.equal(['worker-1']);
    expect(f.finished[0][0]).to.deep.include({ id: 'a', durationMs: 1200 });
    f.watchdog.stop();

    const g = fixture();
    g.run.set('b', running('b', 'worker-1', g.clock.now()));
    g.watchdog.attemptsStarted();
    g.clock.advance(300);
    g.clock.step(-3_600_000); // a step back: the wall deadline is an hour away now
    g.clock.advance(1000);
    expect(g.killed, 'killed at 1.3 s of run time, not an hour later').to.deep.equal(['worker-1']);
    g.watchdog.stop();
  });

  it('cancel: a handler that does not stop within the grace after the cancel gets its process killed; it ends cancelled, its neighbour free', async () => {
    const f = fixture();
    f.run.set('cancelled', running('cancelled', 'worker-1', f.clock.now()));
    f.run.get('cancelled')!.task.timeoutSeconds = 60;
    f.run.set('fine', running('fine', 'worker-1', f.clock.now()));
    f.run.get('fine')!.task.timeoutSeconds = 60;
    f.watchdog.attemptsStarted();
    f.clock.advance(5000);
    f.watchdog.cancelSent('cancelled', 1);
    f.clock.advance(100);
    expect(f.killed).to.deep.equal([]);
    f.clock.advance(100); // grace 200 ms after the cancel
    expect(f.killed).to.deep.equal(['worker-1']);
    const byId = new Map(f.finished[0].map((r) => [r.id, r.outcome]));
    expect(byId.get('cancelled')).to.deep.equal({ kind: 'cancelled' });
    expect(byId.get('fine')).to.deep.include({ errorType: 'worker_recycled', free: true });
    f.watchdog.stop();
  });

  it('a cancel repeated while the handler is stuck (a cancel_running cron firing each period) does not put the kill off: the grace runs from the first', async () => {
    const f = fixture();
    f.run.set('stuck', running('stuck', 'worker-1', f.clock.now()));
    f.run.get('stuck')!.task.timeoutSeconds = 60;
    f.watchdog.attemptsStarted();
    f.watchdog.cancelSent('stuck', 1);
    f.clock.advance(150);
    f.watchdog.cancelSent('stuck', 1); // asked again before the grace ended
    expect(f.killed).to.deep.equal([]);
    f.clock.advance(100); // 250 ms after the first cancel, 100 ms after the second
    expect(f.killed).to.deep.equal(['worker-1']);
    expect(f.finished[0].map((r) => [r.id, r.outcome])).to.deep.equal([['stuck', { kind: 'cancelled' }]]);
    f.watchdog.stop();
  });

  it('an aborted attempt reported while its handler runs is watched: killed at its grace unless the worker says settled', async () => {
    const f = fixture();
    for (const id of ['ignores', 'stops', 'fine']) {
      f.run.set(id, running(id, 'worker-1', f.clock.now()));
      f.run.get(id)!.task.timeoutSeconds = 60;
    }
    f.watchdog.attemptsStarted();
    f.watchdog.cancelSent('ignores', 1);
    f.watchdog.cancelSent('stops', 1);
    const reports = ['ignores', 'stops'].map((id) => ({
      id,
      attempt: 1,
      outcome: { kind: 'cancelled' } as const,
      durationMs: 1,
      handlerRunning: true as const,
    }));
    f.watchdog.reported('worker-1', reports);
    for (const id of ['ignores', 'stops']) f.run.delete(id); // recorded by the dispatcher
    f.clock.advance(100);
    f.watchdog.settled('worker-1', [{ id: 'stops', attempt: 1 }]);
    expect(f.killed).to.deep.equal([]);
    f.clock.advance(100);
    expect(f.killed).to.deep.equal(['worker-1']);
    // Only the neighbour is left to finish: the stopping attempt was recorded at its report.
    expect(f.finished[0].map((r) => [r.id, r.outcome.kind === 'failed' && r.outcome.errorType])).to.deep.equal([
      ['fine', 'worker_recycled'],
    ]);
    f.clock.advance(1000);
    expect(f.killed).to.deep.equal(['worker-1']); // once
    f.watchdog.stop();
  });

  it('a timed-out attempt reported while its handler runs is killed at start + timeout + grace; settled in time, nothing is killed', async () => {
    const f = fixture();
    const start = f.clock.now();
    f.run.set('late', running('late', 'worker-1', start));
    f.run.set('fine', running('fine', 'worker-1', start));
    f.run.get('fine')!.task.timeoutSeconds = 60;
    f.watchdog.attemptsStarted();
    f.clock.advance(1000);
    const timeout = { kind: 'failed', message: 'timed out', errorType: 'timeout', permanent: false } as const;
    f.watchdog.reported('worker-1', [{ id: 'late', attempt: 1, outcome: timeout, durationMs: 1000, handlerRunning: true }]);
    f.run.delete('late');
    f.clock.advance(100);
    expect(f.killed).to.deep.equal([]);
    f.clock.advance(100);
    expect(f.killed).to.deep.equal(['worker-1']);
    expect(f.finished[0].map((r) => r.id)).to.deep.equal(['fine']);
    f.watchdog.stop();

    const g = fixture();
    g.run.set('late', running('late', 'worker-1', g.clock.now()));
    g.watchdog.attemptsStarted();
    g.clock.advance(1000);
    g.watchdog.reported('worker-1', [{ id: 'late', attempt: 1, outcome: timeout, durationMs: 1000, handlerRunning: true }]);
    g.run.delete('late');
    g.watchdog.settled('worker-1', [{ id: 'late', attempt: 1 }]);
    g.clock.advance(5000);
    expect(g.killed).to.deep.equal([]);
    g.watchdog.stop();
  });

  it("a worker's liveness beat extends the leases of the attempts it runs, by leaseMs from now", async () => {
    const f = fixture();
    f.run.set('a', running('a', 'worker-1', f.clock.now(), 2));
    f.run.set('b', running('b', 'worker-2', f.clock.now()));
    f.clock.advance(300);
    await f.watchdog.alive('worker-1');
    await f.watchdog.alive('worker-3'); // runs nothing: no write
    expect(f.extended).to.deep.equal([{ items: [{ taskId: 'a', attempt: 2 }], until: f.clock.now() + 1000 }]);
    // Attempts claimed ahead and held for the worker (not yet sent) go with the same beat.
    await f.watchdog.alive('worker-2', [{ taskId: 'held', attempt: 1 }]);
    expect(f.extended[1]).to.deep.equal({
      items: [
        { taskId: 'held', attempt: 1 },
        { taskId: 'b', attempt: 1 },
      ],
      until: f.clock.now() + 1000,
    });
  });

  it("a liveness beat writes nothing while the store has a fault, and passes on the store's cancel requests", async () => {
    const f = fixture();
    f.run.set('a', running('a', 'worker-1', f.clock.now()));
    f.health.report({ kind: 'disk_full', target: 'x.db', cause: 'SQLITE_FULL', recoverable: true, since: f.clock.now() });
    expect(await f.watchdog.alive('worker-1')).to.deep.equal([]);
    expect(f.extended).to.deep.equal([]);
    f.health.recovered();
    expect(await f.watchdog.alive('worker-1')).to.deep.equal([]);
    expect(f.extended).to.have.length(1);
    f.watchdog.stop();
  });

  it('lease sweep: a lease expired on an attempt this dispatcher runs kills its worker (all charged worker_lost); others are orphans recorded as worker_lost', async () => {
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
    // A frozen or dead process: nothing tells which attempt caused it, so none is free.
    expect(f.finished[0].map((r) => r.outcome)).to.deep.equal([lostOutcome(), lostOutcome()]);
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

  it('a sweep that runs more than half a lease late (this process was stalled) judges no lease for one lease from then; then it does', async () => {
    const f = fixture([{ taskId: 'mine', attempt: 1, retry: RETRY, workerId: 'worker-1' }]);
    f.run.set('mine', running('mine', 'worker-1', f.clock.now()));
    f.watchdog.start(); // a sweep due at 500 ms
    f.clock.stall(2000); // stopped: nothing ran, no beat was read, leases ran out
    f.clock.advance(0); // resumed: the sweep runs 1,500 ms late
    await flush();
    expect(f.killed).to.deep.equal([]);
    f.clock.advance(500);
    await flush();
    expect(f.killed).to.deep.equal([]); // within one lease (1,000 ms) of the resume
    f.clock.advance(500);
    await flush();
    expect(f.killed).to.deep.equal(['worker-1']); // a lease still expired one lease later is judged
    f.watchdog.stop();
  });

  it('a sweep late by at most half a lease judges the leases as usual', async () => {
    const f = fixture([{ taskId: 'mine', attempt: 1, retry: RETRY, workerId: 'worker-1' }]);
    f.run.set('mine', running('mine', 'worker-1', f.clock.now()));
    f.watchdog.start();
    f.clock.stall(1000);
    f.clock.advance(0); // 500 ms late
    await flush();
    expect(f.killed).to.deep.equal(['worker-1']);
    f.watchdog.stop();
  });

  it('a sweep whose read meets a store fault begun after its check logs nothing (the fault is logged once elsewhere); another error is logged; both re-arm', async () => {
    const lines: Array<{ level: number; msg: string }> = [];
    const log = pino({ level: 'info' }, { write: (l: string) => lines.push(JSON.parse(l) as { level: number; msg: string }) });
    let error: Error = new StoreUnavailableError('connection_lost', 'postgres://db', 'Connection terminated unexpectedly', true);
    let reads = 0;
    const f = fixture([], false, {
      log,
      findExpiredLeases: async () => {
        reads++;
        throw error;
      },
    });
    f.watchdog.start();
    f.clock.advance(500);
    await flush();
    expect(reads).to.equal(1);
    expect(lines).to.deep.equal([]);
    error = new Error('disk I/O error');
    f.clock.advance(500);
    await flush();
    expect(reads).to.equal(2);
    expect(lines.map((l) => [l.level, l.msg])).to.deep.equal([[50, 'lease sweep failed']]);
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
