/**
 * The watch over the PostgreSQL server of a running store, on the injected clock: a fault is seen
 * even when nothing reads or writes. Every `intervalMs` (default 2 s) it runs `SELECT 1` on a
 * connection of its own (not the pool's: a pool busy with slow reads is not an outage), bounded by
 * a short connect and read timeout; every `faultIntervalMs` (default 1 s) while a `connection_lost`
 * fault is in force, so the fault ends about a second after the server answers again. A connection
 * the server drops (a shutdown ends every session with 57P01, a crash closes the socket) makes it
 * look at once instead of at the next tick.
 *
 * It also looks at the store's writing connections: a write transaction that has run for
 * `stallMs` (default 10 s) while the server answers the probe is held there (a `LOCK TABLE` on the
 * store's tables, a row lock of an admin's open transaction), and every write queued behind it
 * waits too. That is the recoverable `stalled` fault, so `/readyz` says so instead of
 * 200 while submissions hang (the store reports it too when a call waited the connect timeout for
 * a connection of its full pool); the watch ends it once no write has run that long and the pool
 * has a connection to give.
 */
import { Client } from 'pg';
import type { Clock, TimerHandle } from '../../domain/clock';
import type { StoreHealth } from '../store-health';
import { postgresFaultOf } from './pg-faults';

/** Interval between two looks while the store is healthy (ms). */
export const WATCH_INTERVAL_MS = 2000;
/** Interval between two looks while the server is away (ms). */
export const WATCH_FAULT_INTERVAL_MS = 1000;
/** Bound on the probe's connect and on its `SELECT 1` (ms): a server that does not answer in it is away. */
export const PROBE_TIMEOUT_MS = 2000;
/**
 * How long one write transaction may run before the store reports `stalled` (ms). A
 * group-commit batch commits in milliseconds; the statement timeout (30 s, db.ts) ends one that
 * waits longer, so this sits well under it.
 */
export const WRITE_STALL_MS = 10_000;

/** One liveness check of the server; rejects with the driver's error. */
export type ServerProbe = () => Promise<void>;

/** What a {@link ConnectionWatch} watches and reports to. */
export interface ConnectionWatchDeps {
  clock: Clock;
  health: StoreHealth;
  /** The server without credentials (`postgres://127.0.0.1:5432/scheduler`), for the fault. */
  target: string;
  /** The liveness check ({@link ProbeConnection.check}). */
  probe: ServerProbe;
  /** Interval between looks while healthy (ms); default {@link WATCH_INTERVAL_MS}. */
  intervalMs?: number;
  /** Interval between looks during a `connection_lost` fault (ms); default {@link WATCH_FAULT_INTERVAL_MS}. */
  faultIntervalMs?: number;
  /** When the longest-running write transaction began (epoch ms), or null while none runs. */
  writesBusySince?: () => number | null;
  /** A write running this long with the server answering is `stalled` (ms); default {@link WRITE_STALL_MS}. */
  stallMs?: number;
  /**
   * True while every connection of the store's pool is in use and calls wait for one: a `stalled`
   * fault (which the store reports when such a wait times out) does not end then.
   */
  poolSaturated?: () => boolean;
}

/**
 * Watches one server (see the file header). A failed probe whose error means "the server is away"
 * (pg-faults.ts) reports the recoverable `connection_lost` fault; a probe that succeeds ends a
 * `connection_lost` fault (not a `disk_full` one: a `SELECT 1` says nothing about space; a
 * committed write ends that).
 */
export class ConnectionWatch {
  private timer: TimerHandle | null = null;
  private running: Promise<void> | null = null;
  private stopped = true;
  private again = false;

  constructor(private readonly deps: ConnectionWatchDeps) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule();
  }

  /** Cancels the next look and waits for one in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.cancelTimer();
    await this.running;
  }

  /** Looks now (a connection was dropped), or right after the look in progress. */
  checkSoon(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.cancelTimer();
    this.run();
  }

  /** One look: the probe, the writes, and the health they show. Never throws. */
  async check(): Promise<void> {
    const { health, clock, target } = this.deps;
    try {
      await this.deps.probe();
      if (health.fault?.kind === 'connection_lost') health.recovered();
    } catch (err) {
      const fault = postgresFaultOf(err, target, clock.now());
      if (fault) return health.report({ ...fault, kind: 'connection_lost' });
    }
    this.checkWrites();
  }

  /** Reports `stalled` (when no other fault is in force) or ends it (see the file header). */
  private checkWrites(): void {
    const { health, clock, target } = this.deps;
    const since = this.deps.writesBusySince?.() ?? null;
    const now = clock.now();
    const runningMs = since === null ? 0 : now - since;
    if (runningMs >= (this.deps.stallMs ?? WRITE_STALL_MS)) {
      if (health.fault !== null) return;
      const cause =
        `a write transaction has run ${Math.round(runningMs / 1000)} s while the server answers: a lock held on the store's ` +
        'tables (pg_locks, pg_stat_activity)? Writes queued behind it wait too';
      health.report({ kind: 'stalled', target, cause, recoverable: true, since: now });
    } else if (health.fault?.kind === 'stalled' && !this.deps.poolSaturated?.()) health.recovered();
  }

  private cancelTimer(): void {
    if (this.timer) this.deps.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  private run(): void {
    this.running = this.check().finally(() => {
      this.running = null;
      if (this.again) {
        this.again = false;
        if (!this.stopped) return this.run();
      }
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.stopped || this.timer) return;
    const kind = this.deps.health.fault?.kind;
    const faulted = kind === 'connection_lost' || kind === 'stalled';
    const delay = faulted ? (this.deps.faultIntervalMs ?? WATCH_FAULT_INTERVAL_MS) : (this.deps.intervalMs ?? WATCH_INTERVAL_MS);
    this.timer = this.deps.clock.setTimeout(() => {
      this.timer = null;
      this.run();
    }, delay);
    // The watch alone never keeps the process alive (Node's timers; a manual clock's handles have no unref).
    (this.timer as { unref?: () => void }).unref?.();
  }
}

/**
 * The watch's own connection: made on first use and again after any failure, `SELECT 1` bounded by
 * {@link PROBE_TIMEOUT_MS} for the connect and the read. A connection the server drops while idle
 * calls `onDropped` (the watch then looks at once).
 */
export class ProbeConnection {
  private client: Client | null = null;
  private closed = false;

  /**
   * @param url the store's connection string
   * @param onDropped called when the server ends the idle connection (shutdown, crash, network)
   */
  constructor(
    private readonly url: string,
    private readonly onDropped: () => void,
    private readonly timeoutMs = PROBE_TIMEOUT_MS,
  ) {}

  /** `SELECT 1` on the probe's connection. @throws the driver's error (the connection is then discarded) */
  async check(): Promise<void> {
    if (this.closed) return;
    try {
      const c = await this.connection();
      await c.query({ text: 'SELECT 1', query_timeout: this.timeoutMs } as { text: string });
    } catch (err) {
      this.discard();
      throw err;
    }
  }

  /** Ends the connection; later checks do nothing. */
  async close(): Promise<void> {
    this.closed = true;
    const c = this.client;
    this.client = null;
    await c?.end().catch(() => undefined);
  }

  private async connection(): Promise<Client> {
    if (this.client) return this.client;
    const c = new Client({
      connectionString: this.url,
      connectionTimeoutMillis: this.timeoutMs,
      application_name: 'actor-task-scheduler-watch',
      keepAlive: true,
    });
    c.on('error', () => {
      // The server ended the session (57P01 at a shutdown) or the socket closed: look now.
      if (this.client === c) {
        this.discard();
        this.onDropped();
      }
    });
    try {
      await c.connect();
    } catch (err) {
      await c.end().catch(() => undefined);
      throw err;
    }
    if (this.closed) {
      await c.end().catch(() => undefined);
      throw new Error('probe closed');
    }
    this.client = c;
    return c;
  }

  private discard(): void {
    const c = this.client;
    this.client = null;
    void c?.end().catch(() => undefined);
  }
}
