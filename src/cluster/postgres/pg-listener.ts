import { Client, QueryResult, QueryResultRow } from 'pg';
import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../../domain/clock';

/** Settings of a {@link PgListener}; durations in ms. */
export interface PgListenerOptions {
  /** Channels to LISTEN on (exact names, quoted: case-sensitive). */
  channels: readonly string[];
  /** A connection attempt fails after this long (default 2000). */
  connectTimeoutMs?: number;
  /** A query (a NOTIFY, a clock sample) unanswered this long ends the connection, which is remade (default 5000). */
  queryTimeoutMs?: number;
  /** First wait before reconnecting (default 100); doubles per failed attempt. */
  reconnectMinMs?: number;
  /** Longest wait before reconnecting (default 2000). */
  reconnectMaxMs?: number;
  /** `application_name` shown in `pg_stat_activity` (default `actor-task-scheduler-coordination`). */
  applicationName?: string;
}

/** A notification received: its channel and payload. */
export type NotificationListener = (channel: string, payload: string) => void;

/**
 * One dedicated PostgreSQL connection per node for coordination (not pooled: LISTEN belongs to a
 * session): it LISTENs on the given channels, passes each notification on, and runs the node's
 * few coordination statements (NOTIFY, clock samples). When the connection is lost (server
 * restart, `pg_terminate_backend`, network) or a statement goes unanswered for `queryTimeoutMs`,
 * it is dropped and remade after a backoff (100 ms doubling to 2 s, ±20 % jitter), and the
 * channels are LISTENed again. Both timers run on the given clock (real time in
 * pg-coordination.ts). Notifications sent meanwhile are lost (delivery is at most once). Never
 * throws from its events; {@link query} rejects while it is down.
 */
export class PgListener {
  private client: Client | null = null;
  private connecting: Promise<boolean> | null = null;
  private retry: TimerHandle | null = null;
  private failures = 0;
  private closed = false;
  private isUp = false;
  private readonly listeners: NotificationListener[] = [];
  private readonly changes: Array<(up: boolean) => void> = [];

  /** @param url connection string (`POSTGRES_URL`) */
  constructor(
    private readonly url: string,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly options: PgListenerOptions,
  ) {}

  /** True while connected and listening. */
  get up(): boolean {
    return this.isUp;
  }

  /** The server process id of the current connection (`pg_backend_pid()`), null while down. */
  get backendPid(): number | null {
    return this.isUp && this.client ? ((this.client as unknown as { processID?: number }).processID ?? null) : null;
  }

  /** Calls `fn` for every notification on the channels. */
  onNotification(fn: NotificationListener): void {
    this.listeners.push(fn);
  }

  /** Calls `fn(up)` whenever the connection becomes ready (listening) or is lost. */
  onChange(fn: (up: boolean) => void): void {
    this.changes.push(fn);
  }

  /**
   * Connects and LISTENs, unless already connected or connecting. @returns true once listening,
   * false when this attempt failed (a retry is then scheduled; never throws).
   */
  start(): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    if (this.isUp) return Promise.resolve(true);
    return (this.connecting ??= this.connect().finally(() => (this.connecting = null)));
  }

  /**
   * Runs one statement on the connection. @throws Error while down, the server's error, or a
   * timeout after `queryTimeoutMs` (the connection is then remade).
   */
  async query<R extends QueryResultRow = QueryResultRow>(text: string, values?: unknown[]): Promise<QueryResult<R>> {
    const client = this.client;
    if (!this.isUp || !client) throw new Error('coordination connection to PostgreSQL is down');
    const ms = this.options.queryTimeoutMs ?? 5000;
    let timer: TimerHandle | null = null;
    const timeout = new Promise<never>((_, reject) => {
      timer = this.clock.setTimeout(() => {
        const err = new Error(`coordination statement unanswered after ${ms} ms`);
        this.lost(client, err);
        reject(err);
      }, ms);
    });
    try {
      return await Promise.race([client.query<R>(text, values), timeout]);
    } finally {
      if (timer) this.clock.clearTimeout(timer);
    }
  }

  /** Stops reconnecting and closes the connection. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.retry) this.clock.clearTimeout(this.retry);
    this.retry = null;
    await this.connecting;
    const client = this.client;
    this.client = null;
    this.setUp(false);
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<boolean> {
    const client = new Client({
      connectionString: this.url,
      connectionTimeoutMillis: this.options.connectTimeoutMs ?? 2000,
      application_name: this.options.applicationName ?? 'actor-task-scheduler-coordination',
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
    });
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client, new Error('connection ended')));
    client.on('notification', (n) => {
      if (n.payload === undefined) return;
      for (const fn of this.listeners) fn(n.channel, n.payload);
    });
    this.client = client;
    try {
      await client.connect();
      if (this.options.channels.length > 0) {
        await client.query(this.options.channels.map((c) => `LISTEN "${c.replace(/"/g, '""')}"`).join('; '));
      }
    } catch (err) {
      this.lost(client, err);
      return false;
    }
    if (this.closed || this.client !== client) {
      await client.end().catch(() => undefined);
      return false;
    }
    this.failures = 0;
    this.setUp(true);
    return true;
  }

  /** `client` failed: drop it (once) and schedule a new connection. */
  private lost(client: Client, err: unknown): void {
    if (this.client !== client) return;
    this.client = null;
    const wasUp = this.isUp;
    this.setUp(false);
    client.removeAllListeners('notification');
    client.on('error', () => undefined); // late errors of the dropped connection
    void client.end().catch(() => undefined);
    if (this.closed) return;
    const base = Math.min(this.options.reconnectMaxMs ?? 2000, (this.options.reconnectMinMs ?? 100) * 2 ** this.failures);
    this.failures = Math.min(this.failures + 1, 30);
    const delay = Math.round(base * (0.8 + 0.4 * Math.random()));
    // One line per loss, without a stack (a server stop is an operational event, not a bug).
    if (wasUp) this.log.warn({ cause: errorLine(err), retryInMs: delay }, 'coordination connection to PostgreSQL lost; reconnecting');
    else this.log.debug({ err, retryInMs: delay }, 'coordination connection to PostgreSQL not made; retrying');
    this.retry = this.clock.setTimeout(() => {
      this.retry = null;
      void this.start();
    }, delay);
  }

  private setUp(up: boolean): void {
    if (this.isUp === up) return;
    this.isUp = up;
    for (const fn of this.changes) {
      try {
        fn(up);
      } catch (err) {
        this.log.error({ err }, 'coordination connection listener failed');
      }
    }
  }
}

/** `code: message` of an error, for a log line without a stack. */
function errorLine(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown } | null;
  const message = typeof e?.message === 'string' ? e.message : String(err);
  return typeof e?.code === 'string' ? `${e.code}: ${message}` : message;
}
