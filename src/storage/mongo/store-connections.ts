/**
 * The connection of one {@link MongoStore} and how its calls reach it: the session (client,
 * collections, capabilities found at open), the two write queues (task writes in call order;
 * lease and member writes apart, serialized only where updates are not atomic), the topology
 * watch and the store's health. Every write goes through {@link StoreConnections.write} or
 * {@link StoreConnections.clusterWrite}, which turn a lost connection into the store's fault and
 * its 503 (connection-health.ts).
 */
import { Clock, SystemClock } from '../../domain/clock';
import { StoreHealth } from '../store-health';
import { MongoCapabilities, MongoCollections } from './collections';
import { serversOf, watchedWrite, watchTopology } from './connection-health';
import { MongoStoreOptions, openSession, Session } from './session';
import { WriteLane, WriteQueue } from './write-queue';

/** The time of a fault's `since` when the store is given no clock. */
const SYSTEM_CLOCK = new SystemClock();

/** The store's connection (see the file header). */
export class StoreConnections {
  /** A lost connection (connection-health.ts): writes answer `STORE_UNAVAILABLE` and `/readyz` 503 until a writable server is seen again. */
  readonly health = new StoreHealth();
  private unwatch: (() => void) | null = null;
  private session: Session | null = null;
  private readonly writes = new WriteQueue();
  /** Lease and member writes (FerretDB only): serialized among themselves, never behind task writes. */
  private readonly clusterWrites = new WriteQueue();

  /**
   * @param uri MongoDB connection string (`MONGODB_URI`), e.g. `mongodb://127.0.0.1:27017/scheduler`
   * @param options database name, server selection timeout, the scheduler's clock
   */
  constructor(
    private readonly uri: string,
    readonly options: MongoStoreOptions,
  ) {}

  /** Server capabilities found at open (null while closed). */
  get capabilities(): MongoCapabilities | null {
    return this.session?.capabilities ?? null;
  }

  /**
   * Connects, creates collections and indexes (idempotent), records the partition count and
   * schema version on first use, and starts watching the topology. Idempotent.
   * @throws StoreConfigError when the database was created with another partition count
   */
  async open(partitions: number): Promise<void> {
    if (this.session) return;
    this.session = await openSession(this.uri, this.options, partitions);
    this.unwatch = watchTopology(this.session.client, this.health, serversOf(this.uri), this.clock);
  }

  /** Answers every write issued before it, then disconnects. Idempotent. */
  async close(): Promise<void> {
    if (!this.session) return;
    await Promise.all([this.writes.drain(), this.clusterWrites.drain()]);
    const session = this.session;
    if (!session) return; // a concurrent close finished first
    this.session = null;
    this.unwatch?.();
    this.unwatch = null;
    await session.client.close();
  }

  /** The open session. @throws Error when the store is not open */
  get s(): Session {
    if (!this.session) throw new Error('store is not open');
    return this.session;
  }

  /** The open session's collections, for reads (they run directly). @throws Error when the store is not open */
  get c(): MongoCollections {
    return this.s.c;
  }

  /** The scheduler's clock (the store's option), else the system clock. */
  get clock(): Pick<Clock, 'now'> {
    return this.options.clock ?? SYSTEM_CLOCK;
  }

  /**
   * Queues a task write (`lane` 'first': the writes of running attempts, ahead of the others); the
   * session is looked up when it is queued, so writes queued before close still run.
   */
  write<T>(op: (c: MongoCollections, s: Session) => Promise<T>, lane: WriteLane = 'ordered'): Promise<T> {
    if (!this.session) return Promise.reject(new Error('store is not open'));
    const session = this.session;
    return this.watched(this.writes.run(() => op(session.c, session), lane));
  }

  /**
   * A lease or member write: each is one single-document compare-and-set on `partition_leases` or
   * `members`, whose order with the task writes does not matter, so it never waits behind them (a
   * renewal queued behind a large batch could miss its lease's expiry). Where updates are not
   * atomic (FerretDB 1.x) they are serialized among themselves on a queue of their own, so this
   * store's lease writes never race each other.
   */
  clusterWrite<T>(op: (c: MongoCollections) => Promise<T>): Promise<T> {
    if (this.s.capabilities.atomicUpdates) return this.watched(op(this.c));
    if (!this.session) return Promise.reject(new Error('store is not open'));
    const session = this.session;
    return this.watched(this.clusterWrites.run(() => op(session.c)));
  }

  /** See {@link watchedWrite}. */
  private watched<T>(write: Promise<T>): Promise<T> {
    return watchedWrite(write, this.health, serversOf(this.uri), this.clock);
  }

  /** True when the server answers a `ping` (false when closed or unreachable). */
  async ping(): Promise<boolean> {
    if (!this.session) return false;
    try {
      const r = await this.session.client.db('admin').command({ ping: 1 });
      return r.ok === 1;
    } catch {
      return false;
    }
  }
}
