/**
 * The connections and threads of one {@link SqliteStore}: the main connection (migrations, then
 * the prepared reads), the writer (its own thread for a file, else in process) behind its fault
 * guard, the aggregate-reads and checkpoint threads, the window-reads thread, and the file watch
 * that feeds the store's health. Opening makes them in that order; closing answers every queued
 * write first.
 */
import type Database from 'better-sqlite3';
import { Clock, SystemClock } from '../../domain/clock';
import { SchemaChange } from '../store';
import { StoreHealth } from '../store-health';
import { AggregateReader, InProcessAggregateReader, ThreadAggregateReader } from './aggregate-reader';
import { DueReader, InProcessDueReader, ThreadDueReader } from './due-reader';
import { FileWatch } from './file-watch';
import { GuardedWriter } from './guarded-writer';
import { InProcessWriter } from './in-process-writer';
import { MAIN_READS_CACHE_KIB, openStoreFile } from './open-store-file';
import { guardReads } from './guarded-reads';
import { prepareReadStatements, ReadStatements } from './read-statements';
import { assertSameFile, FileIdentity, identityOf, walFileOf } from './store-faults';
import { ThreadWriter } from './thread-writer';
import { Writer, WriterStats } from './write-ops';

/** Settings of a {@link SqliteStore}. */
export interface SqliteStoreOptions {
  /**
   * Run writes on a dedicated thread (default: true for files; `:memory:` always writes in
   * process, since one in-memory database cannot be shared between threads).
   */
  writerThread?: boolean;
  /** Clock of the file watch's timer and of the faults' `since` (default: the system clock). */
  clock?: Clock;
  /** Interval of the file watch (ms, at most 1000; default 1000). */
  watchIntervalMs?: number;
}

/**
 * The store's connections and threads (see the file header). Each accessor throws
 * `store is not open` before {@link open} and after {@link close}.
 */
export class StoreConnections {
  readonly health = new StoreHealth();
  readonly clock: Clock;
  private db: Database.Database | null = null;
  private watch: FileWatch | null = null;
  private writer: GuardedWriter | null = null;
  private aggregates: AggregateReader | null = null;
  /** File stores: a second aggregate thread, at normal priority, that only checkpoints. */
  private checkpoints: AggregateReader | null = null;
  /** The partition owners' window reads: their own thread for file stores (see due-reader.ts). */
  private dueReads: DueReader | null = null;
  private reads: ReadStatements | null = null;
  /** An open in progress (it waits for the writer thread to run): a close waits for it. */
  private opening: Promise<unknown> | null = null;
  /** A close in progress: a second close gets the same promise. */
  private closing: Promise<void> | null = null;

  /**
   * @param file database path (`:memory:` for tests); its folder is created if missing
   * @param options see {@link SqliteStoreOptions}
   */
  constructor(
    private readonly file: string,
    private readonly options: SqliteStoreOptions = {},
  ) {
    this.clock = options.clock ?? new SystemClock();
  }

  /**
   * Opens and migrates the file, then makes the writer and the reading threads. A close called
   * meanwhile waits for the open to finish, then closes everything it made.
   * @returns the schema change the migrations made, or null
   * @throws StoreConfigError (open-store-file.ts) when the file was made with another partition count or by a newer build
   */
  async open(partitions: number): Promise<SchemaChange | null> {
    const opening = this.openNow(partitions);
    this.opening = opening.catch(() => undefined);
    try {
      return await opening;
    } finally {
      this.opening = null;
    }
  }

  private async openNow(partitions: number): Promise<SchemaChange | null> {
    const inMemory = this.file === ':memory:';
    const threads = !inMemory && (this.options.writerThread ?? true);
    const { db, change } = openStoreFile(this.file, partitions, threads ? { readsCacheKib: MAIN_READS_CACHE_KIB } : {});
    const identity: FileIdentity | null = inMemory ? null : identityOf(this.file);
    // Its write-ahead log, open since openStoreFile (null when SQLite made none: nothing to watch).
    const wal: FileIdentity | null = identity ? identityOf(walFileOf(this.file)) : null;
    const afterCommit = identity ? () => assertSameFile(this.file, identity, wal) : undefined;
    const threadWriter = threads ? new ThreadWriter(this.file, identity, wal) : null;
    // The writer's thread starts at the full young generation (young-generation.ts); the other
    // threads are made once it runs, so they do not.
    await threadWriter?.started();
    this.db = db;
    const inner: Writer = threadWriter ?? new InProcessWriter(db, afterCommit);
    this.writer = new GuardedWriter(inner, { file: this.file, identity, health: this.health, clock: this.clock });
    this.aggregates = threads ? new ThreadAggregateReader(this.file) : new InProcessAggregateReader(db);
    this.checkpoints = threads ? new ThreadAggregateReader(this.file, 0, 'SQLite checkpoints') : null;
    this.dueReads = threads ? new ThreadDueReader(this.file) : new InProcessDueReader(db);
    const writer = this.writer;
    this.reads = guardReads(prepareReadStatements(db), (err) => writer.failed(err));
    if (identity) {
      this.watch = new FileWatch({
        file: this.file,
        opened: identity,
        wal,
        clock: this.clock,
        health: this.health,
        probe: () => inner.run('probeWrite', [this.clock.now()]),
        // Off the writer, on the thread that checkpoints (the main connection when writing in process).
        reclaim: () => (this.checkpoints ?? this.agg).truncateLog(),
        ...(this.options.watchIntervalMs !== undefined ? { intervalMs: this.options.watchIntervalMs } : {}),
      });
      this.watch.start();
    }
    return change;
  }

  /**
   * Stops the watch, answers every queued write, ends the threads and closes the file, after an
   * open in progress has finished. Idempotent; calls made while a close runs get its promise.
   */
  close(): Promise<void> {
    this.closing ??= this.closeNow().finally(() => {
      this.closing = null;
    });
    return this.closing;
  }

  private async closeNow(): Promise<void> {
    await this.opening;
    if (!this.db) return;
    await this.watch?.stop();
    this.watch = null;
    const { db, writer, aggregates, checkpoints, dueReads } = this;
    this.db = null;
    this.writer = null;
    this.aggregates = null;
    this.checkpoints = null;
    this.dueReads = null;
    this.reads = null;
    await Promise.all([writer?.close(), aggregates?.close(), checkpoints?.close(), dueReads?.close()]);
    db.close();
  }

  /** A PASSIVE WAL checkpoint on the checkpoint thread (the aggregate reader in process); a failure as the writer reports it. */
  async checkpoint(): Promise<void> {
    await (this.checkpoints ?? this.agg).checkpoint().catch((err: unknown) => {
      throw this.w.failed(err);
    });
  }

  /** Group-commit statistics and the writer's young generation; null when closed. */
  async commitStats(): Promise<WriterStats | null> {
    return this.writer ? this.writer.stats() : null;
  }

  /** True when the main connection answers `SELECT 1`; false when closed. */
  ping(): boolean {
    return this.db !== null && this.db.prepare('SELECT 1').pluck().get() === 1;
  }

  /** The prepared reads on the main connection. */
  get r(): ReadStatements {
    if (!this.reads) throw new Error('store is not open');
    return this.reads;
  }

  /** Counts and the audit scan (their own thread for a file). */
  get agg(): AggregateReader {
    if (!this.aggregates) throw new Error('store is not open');
    return this.aggregates;
  }

  /** The writer behind its fault guard. */
  get w(): GuardedWriter {
    if (!this.writer) throw new Error('store is not open');
    return this.writer;
  }

  /** The partition owners' window reads. */
  get due(): DueReader {
    if (!this.dueReads) throw new Error('store is not open');
    return this.dueReads;
  }
}
