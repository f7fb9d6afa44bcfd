import Redis, { RedisOptions, ReplyError } from 'ioredis';
import type { Logger } from 'pino';
import type { RedisMetrics } from './redis-metrics';
import type { Config } from '../../config';
import type { Clock, TimerHandle } from '../../domain/clock';
import { checkExternalQueues } from '../../config';
import { streamQueueNames } from '../../domain/external-queues';

/** Connection tuning; every duration in ms. */
export interface RedisConnectionOptions {
  /** Longest wait for a TCP connection (default 2,000). */
  connectTimeoutMs?: number;
  /** Longest wait for a command's reply (default 1,000): a hung server must not hang dispatch. */
  commandTimeoutMs?: number;
  /** Longest pause between reconnection attempts (default 2,000; attempts back off 100 ms each). */
  maxReconnectDelayMs?: number;
  /** Interval of the liveness PING while the connection is ready (default 2,000; {@link RedisConnection.watchLiveness}). */
  livenessIntervalMs?: number;
  /**
   * A key the liveness watch writes (expiring in 5 s) while the server refuses commands, to learn
   * when it takes them again without waiting for a limit's next script (default: none; the
   * coordination gives `<prefix>refusal-probe`).
   */
  probeKey?: string;
}

/**
 * The node's connection to Redis (cluster mode), made from `redisUrl`. It keeps reconnecting
 * while the server is away and reports its health: {@link up} (also the `scheduler_redis_up`
 * gauge) and {@link onChange} listeners. Commands fail at once while it is down (no offline
 * queue): callers fall back to local behaviour instead of waiting.
 *
 * Errors: the constructor throws on a malformed URL (ioredis); nothing else throws, connection
 * errors are logged once per state change.
 */
export class RedisConnection {
  /** The command connection (scripts, TIME, PUBLISH). */
  readonly client: Redis;
  private readonly listeners: Array<(up: boolean) => void> = [];
  private readonly subscribers: Redis[] = [];
  private wasUp = false;
  private closed = false;
  private refusal: string | null = null;
  private liveness: { clock: Clock; timer: TimerHandle | null } | null = null;

  /**
   * @param url `redis://[user:password@]host:port[/db]` (or `rediss://` for TLS)
   * @param metrics where the health gauge goes (optional)
   * @param log warnings on losing and regaining the server
   */
  constructor(
    readonly url: string,
    private readonly log: Logger,
    private readonly metrics?: RedisMetrics,
    private readonly options: RedisConnectionOptions = {},
  ) {
    this.client = new Redis(url, { ...this.baseOptions(), enableOfflineQueue: false });
    this.watch(this.client, 'command');
    this.metrics?.up.set(0);
  }

  /** True while the command connection is ready. */
  get up(): boolean {
    return this.client.status === 'ready';
  }

  /**
   * The error the server answered the last tracked command with (`OOM command not allowed when
   * used memory > 'maxmemory'`, `READONLY …` of a replica), or null when the last one was taken.
   * While set, the shared limits decide per node (readiness `degraded`).
   */
  get refusing(): string | null {
    return this.refusal;
  }

  /**
   * Runs `call` (a script of the shared limits) and notes whether the server took it: an error
   * reply marks the connection {@link refusing} until a tracked call succeeds, logged once each
   * way. Before, a Redis out of memory looked healthy while every node fell back to its own
   * limits. Errors of the connection (timeouts, a lost socket) are its state's business, not a
   * refusal. @returns what `call` returns; rethrows what it throws
   */
  async tracked<T>(call: () => Promise<T>): Promise<T> {
    try {
      const value = await call();
      if (this.refusal !== null) {
        this.refusal = null;
        this.log.info({ redis: redact(this.url) }, 'Redis takes commands again; shared limits are shared again');
      }
      return value;
    } catch (err) {
      if (err instanceof ReplyError && this.refusal === null) {
        this.refusal = (err as Error).message;
        this.log.warn(
          { redis: redact(this.url), err: this.refusal },
          'Redis refuses commands; rate and concurrency limits decide per node until it takes them again',
        );
      }
      throw err;
    }
  }

  /** Calls `fn(up)` whenever the connection becomes ready or is lost. */
  onChange(fn: (up: boolean) => void): void {
    this.listeners.push(fn);
  }

  /**
   * Connects, waiting at most the connect timeout. @returns true when ready; false when Redis is
   * unreachable (reconnection goes on in the background).
   */
  async connect(): Promise<boolean> {
    try {
      await this.client.connect();
    } catch (err) {
      this.log.warn({ err, redis: redact(this.url) }, 'Redis unreachable at start; running degraded (local limits) until it answers');
    }
    return this.up;
  }

  /**
   * A second connection for SUBSCRIBE (a subscribed connection can send nothing else). It
   * queues the subscriptions while disconnected and subscribes again after each reconnection.
   * Closed by {@link close}.
   */
  subscriber(): Redis {
    const sub = new Redis(this.url, { ...this.baseOptions(), enableOfflineQueue: true, lazyConnect: false });
    this.watch(sub, 'subscriber');
    this.subscribers.push(sub);
    return sub;
  }

  /**
   * Starts the liveness watch on `clock`: every `livenessIntervalMs` (2 s) while the connection is
   * ready, a PING. A server that holds the connection open but does not answer (frozen: SIGSTOP, a
   * hung host, a half-open socket) keeps ioredis's status `ready`, and every command would time
   * out in turn while {@link up} said true; a PING that times out (`commandTimeoutMs`) drops the
   * connection instead, so the node reports Redis `down` (readiness `degraded`, local limits) and
   * reconnects: it is `up` again once the server answers the reconnection's ready check. Stopped
   * by {@link close}. A no-op when already started.
   */
  watchLiveness(clock: Clock): void {
    if (this.liveness || this.closed) return;
    this.liveness = { clock, timer: null };
    this.scheduleLiveness();
  }

  /**
   * One liveness look (see {@link watchLiveness}), and while the server refuses commands
   * ({@link refusing}) a write of `probeKey`, so the refusal ends when the server takes writes
   * again even if no limit asks meanwhile. Never throws. @returns true when the server answered
   */
  async checkLiveness(): Promise<boolean> {
    if (this.client.status !== 'ready') return false;
    try {
      await this.client.ping();
      const probeKey = this.options.probeKey;
      if (this.refusal !== null && probeKey) await this.tracked(() => this.client.set(probeKey, '1', 'PX', 5000)).catch(() => undefined);
      return true;
    } catch (err) {
      if (this.closed || this.client.status !== 'ready') return false;
      // A timeout on a ready connection: the server holds the socket but does not answer.
      if (err instanceof Error && /timed out/i.test(err.message)) {
        this.log.warn({ redis: redact(this.url), err: err.message }, 'Redis does not answer; dropping the connection to reconnect');
        this.client.disconnect(true);
      }
      return false;
    }
  }

  private scheduleLiveness(): void {
    const l = this.liveness;
    if (!l || this.closed) return;
    l.timer = l.clock.setTimeout(() => {
      l.timer = null;
      void this.checkLiveness().finally(() => this.scheduleLiveness());
    }, this.options.livenessIntervalMs ?? 2000);
    (l.timer as { unref?: () => void }).unref?.();
  }

  /** Closes every connection (QUIT, or a hard disconnect when the server is away). Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.liveness?.timer) this.liveness.clock.clearTimeout(this.liveness.timer);
    this.liveness = null;
    await Promise.all([this.client, ...this.subscribers].map((c) => quit(c)));
    this.metrics?.up.set(0);
  }

  private baseOptions(): RedisOptions {
    const maxDelay = this.options.maxReconnectDelayMs ?? 2000;
    return {
      lazyConnect: true,
      connectTimeout: this.options.connectTimeoutMs ?? 2000,
      commandTimeout: this.options.commandTimeoutMs ?? 1000,
      maxRetriesPerRequest: 1,
      retryStrategy: (times: number) => (this.closed ? null : Math.min(times * 100, maxDelay)),
    };
  }

  private watch(c: Redis, role: 'command' | 'subscriber'): void {
    // ioredis emits 'error' on each failed reconnection: without a listener Node would throw.
    c.on('error', (err: Error) => this.log.debug({ err, role }, 'Redis connection error'));
    if (role !== 'command') return;
    c.on('ready', () => this.changed(true));
    c.on('close', () => this.changed(false));
    c.on('end', () => this.changed(false));
  }

  private changed(up: boolean): void {
    if (up === this.wasUp) return;
    this.wasUp = up;
    this.metrics?.up.set(up ? 1 : 0);
    if (!this.closed) {
      if (up) this.log.info({ redis: redact(this.url) }, 'Redis connected');
      else this.log.warn({ redis: redact(this.url) }, 'Redis connection lost; running degraded (local limits) until it answers');
    }
    for (const fn of this.listeners) fn(up);
  }
}

async function quit(c: Redis): Promise<void> {
  if (c.status === 'end') return;
  if (c.status !== 'ready') {
    c.disconnect();
    return;
  }
  await c.quit().catch(() => c.disconnect());
}

/** The URL without its password (for logs). */
export function redact(url: string): string {
  return url.replace(/\/\/([^@/]*)@/, (_m, cred: string) => `//${cred.includes(':') ? cred.split(':')[0] + ':***' : '***'}@`);
}

/**
 * The ioredis client external queues write their streams with, or null when no stream queue is
 * configured (none, or only pull queues).
 * Commands fail after 3 reconnection attempts instead of queueing forever, so a Redis outage turns
 * into retried attempts, not a stalled dispatcher.
 * @throws ConfigError when external queues are configured without `redisUrl`
 */
export function createStreamRedis(config: Pick<Config, 'externalQueues' | 'redisUrl'>): Redis | null {
  if (streamQueueNames(config.externalQueues).length === 0) return null;
  checkExternalQueues(config);
  return new Redis(config.redisUrl as string, { maxRetriesPerRequest: 3, lazyConnect: false });
}
