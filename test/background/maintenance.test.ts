import { expect } from 'chai';
import path from 'node:path';
import { Maintenance, MaintenanceDeps, PURGE_BATCH } from '../../src/background/maintenance';
import { Config, loadConfig } from '../../src/config';
import { ManualClock } from '../../src/domain/clock';
import { SchedulerMetrics } from '../../src/observability/metrics';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store';
import { newTask, PARTITIONS } from '../storage/fixtures';

const T0 = Date.UTC(2026, 5, 1, 12, 0, 0);
const DAY = 86_400_000;

/** Turns the event loop until `cond` holds (group commit and the pass run on setImmediate); no sleeps. */
async function waitFor(cond: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await cond()) return;
    await new Promise((r) => setImmediate(r));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Lets any queued store work and pass finish. */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
}

type PurgeArgs = [before: number, now: number, limit: number];
type PurgeResult = { tasks: number; idempotencyKeys: number };

/** Retention passes driven by a manual clock over a real in-memory SQLite store. */
describe('Maintenance (retention) with a manual clock', () => {
  let store: SqliteStore;
  let clock: ManualClock;
  let config: Config;
  let metrics: SchedulerMetrics;
  let logs: Array<{ level: 'debug' | 'warn'; fields: Record<string, unknown>; msg: string }>;
  let calls: PurgeArgs[];
  /** Replaces the store's answer for the next calls (then the real store answers). */
  let intercept: Array<(args: PurgeArgs) => Promise<PurgeResult>>;
  let maintenance: Maintenance;

  beforeEach(async () => {
    store = new SqliteStore(':memory:');
    await store.open(PARTITIONS);
    clock = new ManualClock(T0);
    config = loadConfig({ configDir: path.resolve(__dirname, '..', '..', '..', 'config'), env: {} });
    metrics = new SchedulerMetrics(() => store.countByState());
    logs = [];
    calls = [];
    intercept = [];
    const deps: MaintenanceDeps = {
      store: {
        purgeFinished: (...args: PurgeArgs) => {
          calls.push(args);
          const fake = intercept.shift();
          return fake ? fake(args) : store.purgeFinished(...args);
        },
        purgeCronFires: (before: number, limit: number) => store.purgeCronFires(before, limit),
      },
      clock,
      config,
      metrics,
      log: {
        debug: ((fields: Record<string, unknown>, msg: string) => logs.push({ level: 'debug', fields, msg })) as never,
        warn: ((fields: Record<string, unknown>, msg: string) => logs.push({ level: 'warn', fields, msg })) as never,
      },
    };
    maintenance = new Maintenance(deps);
  });

  afterEach(async () => {
    await maintenance.stop();
    expect(clock.pendingTimers(), 'timers left behind').to.equal(0);
    await store.close();
  });

  /** Inserts PENDING tasks and cancels them at `at`: finished tasks completed at `at`. */
  async function finishedAt(ids: string[], at: number): Promise<void> {
    await store.insertTasks(ids.map((id) => newTask(id, { createdAt: at - 1000 })));
    await Promise.all(ids.map((id) => store.cancelTask(id, at)));
  }

  async function purgedCounter(): Promise<number> {
    return (await metrics.purgedTasks.get()).values[0]?.value ?? 0;
  }

  it('uses the configured defaults: 7 days retention, a pass every minute', () => {
    expect(config.resultRetentionMs).to.equal(7 * DAY);
    expect(config.maintenanceIntervalMs).to.equal(60_000);
  });

  it('first pass one interval after start: purges what finished before now − retention, keeps the rest', async () => {
    await finishedAt(['old-1', 'old-2'], T0 - 8 * DAY);
    await finishedAt(['young'], T0 - 1 * DAY);
    await store.insertTasks([
      newTask('waiting', { createdAt: T0 - 30 * DAY }),
      newTask('keyed', { createdAt: T0 - 2 * DAY, idempotencyKey: 'k', idempotency: { requestHash: 'h', expiresAt: T0 - DAY } }),
    ]);
    maintenance.start();
    expect(clock.pendingTimers()).to.equal(1);
    clock.advance(59_999);
    await settle();
    expect(calls).to.deep.equal([]);
    clock.advance(1);
    await waitFor(() => logs.length > 0, 'the pass');
    const now = T0 + 60_000;
    expect(calls).to.deep.equal([[now - 7 * DAY, now, PURGE_BATCH]]);
    expect(await store.getTask('old-1')).to.equal(null);
    expect(await store.getTask('old-2')).to.equal(null);
    expect((await store.getTask('young'))?.state).to.equal('CANCELLED');
    expect((await store.getTask('waiting'))?.state).to.equal('PENDING');
    expect((await store.getTask('keyed'))?.state).to.equal('PENDING');
    expect(logs).to.deep.equal([
      {
        level: 'debug',
        fields: { purged_tasks: 2, purged_idempotency_keys: 1, purged_cron_fires: 0, before: now - 7 * DAY },
        msg: 'retention pass',
      },
    ]);
    expect(await purgedCounter()).to.equal(2);
    expect(clock.pendingTimers(), 'the next pass is scheduled').to.equal(1);
  });

  it('runs every interval, so a task goes once it is older than the retention', async () => {
    await finishedAt(['soon'], T0 - 7 * DAY + 5 * 60_000); // past retention 5 minutes from now
    maintenance.start();
    let passes = 0;
    while ((await store.getTask('soon')) !== null) {
      clock.advance(60_000);
      passes++;
      await waitFor(() => calls.length === passes, `pass ${passes}`);
      await waitFor(() => clock.pendingTimers() === 1, `the timer after pass ${passes}`);
      if (passes > 10) throw new Error('never purged');
    }
    expect(passes).to.equal(6); // at T0 + 6 min: before = completion + 1 min
    expect(calls.map((c) => c[1])).to.deep.equal([1, 2, 3, 4, 5, 6].map((m) => T0 + m * 60_000));
    expect(await purgedCounter()).to.equal(1);
  });

  it('purges in batches of 1000 until a batch comes back short', async () => {
    const ids = Array.from({ length: 2 * PURGE_BATCH + 500 }, (_, i) => `bulk-${i}`);
    await finishedAt(ids, T0 - 10 * DAY);
    maintenance.start();
    clock.advance(60_000);
    await waitFor(() => logs.length > 0, 'the pass');
    expect(calls).to.have.length(3);
    const now = T0 + 60_000;
    for (const c of calls) expect(c).to.deep.equal([now - 7 * DAY, now, PURGE_BATCH]);
    expect(logs[0].fields).to.include({ purged_tasks: 2500, purged_idempotency_keys: 0 });
    expect(await purgedCounter()).to.equal(2500);
    expect(Object.values(await store.countByState()).reduce((a, b) => a + b, 0)).to.equal(0);
  });

  it('a full batch of idempotency keys alone also asks for another batch', async () => {
    intercept.push(async () => ({ tasks: 3, idempotencyKeys: PURGE_BATCH }));
    maintenance.start();
    clock.advance(60_000);
    await waitFor(() => logs.length > 0, 'the pass');
    expect(calls).to.have.length(2);
    expect(logs[0].fields).to.include({ purged_tasks: 3, purged_idempotency_keys: PURGE_BATCH });
  });

  it('passes never overlap: the next timer is set only when a pass has finished', async () => {
    let release: (r: PurgeResult) => void = () => undefined;
    intercept.push(() => new Promise<PurgeResult>((r) => (release = r)));
    maintenance.start();
    clock.advance(60_000);
    await settle();
    expect(calls).to.have.length(1);
    expect(clock.pendingTimers(), 'no timer while a pass runs').to.equal(0);
    clock.advance(10 * 60_000);
    await settle();
    expect(calls).to.have.length(1);
    release({ tasks: 0, idempotencyKeys: 0 });
    await waitFor(() => clock.pendingTimers() === 1, 'the next timer');
    clock.advance(60_000);
    await waitFor(() => calls.length === 2, 'the second pass');
  });

  it('a failed pass is logged as a warning and the next interval tries again', async () => {
    await finishedAt(['old'], T0 - 8 * DAY);
    intercept.push(async () => {
      throw new Error('disk I/O error');
    });
    maintenance.start();
    clock.advance(60_000);
    await waitFor(() => logs.some((l) => l.level === 'warn'), 'the warning');
    expect(logs[0].msg).to.contain('retention pass failed');
    expect((logs[0].fields.err as Error).message).to.equal('disk I/O error');
    expect((await store.getTask('old'))?.state).to.equal('CANCELLED');
    await waitFor(() => clock.pendingTimers() === 1, 'the next timer');
    clock.advance(60_000);
    await waitFor(() => logs.some((l) => l.level === 'debug'), 'the second pass');
    expect(await store.getTask('old')).to.equal(null);
  });

  it('stop() cancels the timer; start() is idempotent and resumes after a stop', async () => {
    maintenance.start();
    maintenance.start();
    expect(clock.pendingTimers()).to.equal(1);
    await maintenance.stop();
    expect(clock.pendingTimers()).to.equal(0);
    clock.advance(10 * 60_000);
    await settle();
    expect(calls).to.deep.equal([]);
    maintenance.start();
    clock.advance(60_000);
    await waitFor(() => calls.length === 1, 'a pass after restart');
  });

  it('stop() during a pass waits for its current batch and asks for no more', async () => {
    let release: (r: PurgeResult) => void = () => undefined;
    intercept.push(() => new Promise<PurgeResult>((r) => (release = r)));
    maintenance.start();
    clock.advance(60_000);
    await settle();
    expect(calls).to.have.length(1);
    let stopped = false;
    const stopping = maintenance.stop().then(() => (stopped = true));
    await settle();
    expect(stopped, 'stop waits for the batch in flight').to.equal(false);
    release({ tasks: PURGE_BATCH, idempotencyKeys: 0 }); // a full batch: it would go on, but is stopping
    await stopping;
    expect(calls).to.have.length(1);
    expect(await purgedCounter()).to.equal(PURGE_BATCH);
    expect(clock.pendingTimers()).to.equal(0);
  });
});
