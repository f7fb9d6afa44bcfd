import path from 'node:path';
import pino from 'pino';
import { startScheduler, Scheduler } from '../../src/bootstrap';
import { loadConfig } from '../../src/config';
import type { Clock } from '../../src/domain/clock';
import { dropServiceSchema, serviceStoreOverrides } from './service-store';
import { tempDir } from './temp-dir';

const TERMINAL = ['SUCCEEDED', 'FAILED', 'DEAD', 'CANCELLED'];

/** True for a task in a terminal state (API view). */
export const terminal = (t: Record<string, any>): boolean => TERMINAL.includes(t.status);

/** A scheduler started in this process for the enclosing `describe`, with helpers to wait on tasks. */
export interface InProcessScheduler {
  readonly scheduler: Scheduler;
  /** The temp folder (SQLite file; put handler modules here). */
  readonly dir: string;
  /**
   * The scheduler's own clock reading: the injected clock, corrected on PostgreSQL by the measured
   * offset to the database server's clock (bootstrap.ts: one time source per store), as Redis does.
   */
  now(): number;
  /** Polls `service.get(id, {attempts: true})` until `done` holds (bounded): waits for state, not time. */
  waitFor(id: string, done: (t: Record<string, any>) => boolean, timeoutMs?: number): Promise<Record<string, any>>;
}

/**
 * Mocha fixture: starts the real scheduler (store, actors, forked workers) in this process on a
 * temp SQLite file in `before` (its own PostgreSQL schema under `TEST_SERVICE_STORE=postgres`,
 * test/helpers/service-store.ts), closes it and removes the folder in `after`. `overrides` are config
 * keys; `prepare(dir)` runs first (e.g. to write handler modules) and may return more overrides.
 * `options.clock`: the scheduler's clock (e.g. a ManualClock the test moves; default: system time).
 */
export function useInProcessScheduler(
  overrides: Record<string, unknown>,
  prepare: (dir: string) => Record<string, unknown> = () => ({}),
  options: { clock?: Clock } = {},
): InProcessScheduler {
  const dir = tempDir();
  let scheduler: Scheduler | null = null;
  before(async () => {
    const config = loadConfig({
      configDir: path.resolve(__dirname, '..', '..', '..', 'config'),
      env: {},
      overrides: {
        sqlitePath: path.join(dir.path, 's.db'),
        logLevel: 'silent',
        ...(overrides.store === undefined ? serviceStoreOverrides(dir.path) : {}),
        ...overrides,
        ...prepare(dir.path),
      },
    });
    // A manual clock is measured against the coordination server's once (cluster/offset-clock.ts `intervalMs`).
    scheduler = await startScheduler(config, {
      logger: pino({ level: 'silent' }),
      ...(options.clock ? { clock: options.clock, clockSync: { intervalMs: Infinity } } : {}),
    });
  });
  after(async () => {
    await scheduler?.close();
    await dropServiceSchema(dir.path);
    dir.remove();
  });
  return {
    get scheduler() {
      if (!scheduler) throw new Error('scheduler not started');
      return scheduler;
    },
    dir: dir.path,
    now() {
      const s = this.scheduler;
      return (s.coordination?.clock ?? s.pgCoordination?.clock ?? options.clock)?.now() ?? Date.now();
    },
    async waitFor(id, done, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const t = await this.scheduler.service.get(id, { attempts: true });
        if (done(t)) return t;
        if (Date.now() > deadline) throw new Error(`task ${id}: condition not reached; last seen ${JSON.stringify(t)}`);
        await new Promise((r) => setTimeout(r, 20)); // polling the task's state, not timing logic
      }
    },
  };
}
