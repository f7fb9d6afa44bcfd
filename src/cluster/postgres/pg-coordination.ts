import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { Clock, SystemClock } from '../../domain/clock';
import { ClockSyncOptions, OffsetClock } from '../offset-clock';
import { databaseTime } from './database-time';
import { channelNames } from './notify-payload';
import { PostgresBus } from './pg-bus';
import { PgCoordinationMetrics } from './pg-coordination-metrics';
import { PgListener, PgListenerOptions } from './pg-listener';

/**
 * What a cluster node coordinates through its PostgreSQL store when there is no Redis: the
 * database's clock and the LISTEN/NOTIFY bus (wake-ups, cancels, task ends). Rate limits and
 * concurrency keys stay per node (they need Redis to be shared).
 */
export interface PgCoordination {
  /** This node's id in coordination messages. */
  readonly nodeId: string;
  /** The one coordination connection (LISTEN, NOTIFY, clock samples). */
  readonly listener: PgListener;
  /** The PostgreSQL server's clock as seen from here (errs late); re-measured periodically. */
  readonly clock: OffsetClock;
  readonly bus: PostgresBus;
  /** 'up' while the coordination connection listens, 'down' while it reconnects. */
  status(): 'up' | 'down';
  /** Stops re-measuring and closes the connection. Idempotent. */
  close(): Promise<void>;
}

/** Settings of {@link startPgCoordination}. */
export interface PgCoordinationOptions {
  /** `postgres://…` (config `postgresUrl`, env POSTGRES_URL): the store's database. */
  url: string;
  /** The store's schema (names the channels); default `public`. */
  schema?: string;
  /** The local clock: the database clock's base (reads, re-measure timer). */
  base: Clock;
  /**
   * Timers of the connection's I/O: the statement timeout and the reconnection backoff. Default:
   * the system clock, always, as ioredis's command timeout and reconnection run on real time
   * (src/cluster/redis/coordination.ts): they watch a real network peer, not the schedule. A test
   * that moves a ManualClock `base` by seconds would otherwise time out statements still in
   * flight, drop the connection (and the messages sent meanwhile) and re-measure the clock.
   */
  ioClock?: Clock;
  log: Logger;
  /** The service's metric registry (the `scheduler_postgres_*` coordination metrics go there). */
  registry?: Registry;
  nodeId?: string;
  connection?: Omit<PgListenerOptions, 'channels'>;
  clockSync?: ClockSyncOptions;
}

/**
 * Opens the coordination connection, LISTENs on the schema's channels and measures the database's
 * clock (awaited when the server answers, so the node starts on the database's time). Never fails
 * on an unreachable server: it starts on the local clock and without messages from other nodes,
 * and recovers when the server answers (re-measuring the clock at once after each reconnection).
 * @throws Error for a schema name that is not a plain identifier
 */
export async function startPgCoordination(o: PgCoordinationOptions): Promise<PgCoordination> {
  const log = o.log.child({ component: 'postgres-coordination' });
  const metrics = o.registry ? new PgCoordinationMetrics(o.registry) : undefined;
  const nodeId = o.nodeId ?? randomUUID();
  const schema = o.schema ?? 'public';
  const listener = new PgListener(o.url, o.ioClock ?? new SystemClock(), log, {
    ...o.connection,
    channels: Object.values(channelNames(schema)),
  });
  const clock = new OffsetClock(o.base, databaseTime(listener), log, metrics, o.clockSync);
  const bus = new PostgresBus(listener, nodeId, log, metrics, { schema });
  const up = await listener.start();
  metrics?.up.set(up ? 1 : 0);
  if (up) await clock.measure();
  listener.onChange((isUp) => {
    metrics?.up.set(isUp ? 1 : 0);
    // The server may have changed (failover): measure again at once.
    if (isUp) void clock.measure();
  });
  clock.start();
  let closing: Promise<void> | null = null;
  return {
    nodeId,
    listener,
    clock,
    bus,
    status: () => (listener.up ? 'up' : 'down'),
    close: () =>
      (closing ??= (async () => {
        clock.stop();
        await listener.close();
      })()),
  };
}
