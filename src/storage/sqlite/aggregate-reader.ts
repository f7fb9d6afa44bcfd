import path from 'node:path';
import type Database from 'better-sqlite3';
import { TaskState } from '../../domain/task';
import { AuditScan } from '../store';
import { AggregateName, Aggregates, prepareAggregates } from './ops/aggregates';
import { ThreadRpc } from './thread-rpc';

/** The aggregate reads of `ops/aggregates.ts`, answered asynchronously. */
export interface AggregateReader {
  countByState(): Promise<Record<TaskState, number>>;
  countWaitingByTenant(): Promise<Record<string, number>>;
  auditScan(now: number, overdueBefore: number, limit: number): Promise<AuditScan>;
  /** A PASSIVE WAL checkpoint off the writer (see ops/aggregates.ts). */
  checkpoint(): Promise<void>;
  /** A TRUNCATE checkpoint: true when the WAL file was cut to zero bytes (see ops/aggregates.ts). */
  truncateLog(): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * Aggregates on their own thread and connection (file stores): a `/metrics` scrape or a
 * backpressure refresh costs the event loop one message, whatever the table's size. At most one
 * scan of each kind runs at a time. Callers that ask while one runs share the next scan, started
 * when it ends (not the running one, which may predate a write they have seen acknowledged). A
 * thread that exited is replaced at the next request.
 */
export class ThreadAggregateReader implements AggregateReader {
  private rpc: ThreadRpc | null = null;
  private closed = false;
  private readonly running = new Map<AggregateName, Promise<unknown>>();
  private readonly next = new Map<AggregateName, Promise<unknown>>();

  /**
   * @param file the database file (already migrated); its thread starts at the first read
   * @param nice the thread's nice value (default 10: background scans; 0 for the checkpoints)
   * @param label names the thread in its errors (default "SQLite aggregate reads")
   */
  constructor(
    private readonly file: string,
    private readonly nice?: number,
    private readonly label = 'SQLite aggregate reads',
  ) {}

  countByState(): Promise<Record<TaskState, number>> {
    return this.shared('countByState') as Promise<Record<TaskState, number>>;
  }

  countWaitingByTenant(): Promise<Record<string, number>> {
    return this.shared('countWaitingByTenant') as Promise<Record<string, number>>;
  }

  async checkpoint(): Promise<void> {
    await this.shared('checkpoint');
  }

  truncateLog(): Promise<boolean> {
    return this.shared('truncateLog') as Promise<boolean>;
  }

  /** One audit pass (not shared: its arguments differ per call). */
  auditScan(now: number, overdueBefore: number, limit: number): Promise<AuditScan> {
    return this.request('auditScan', [now, overdueBefore, limit]) as Promise<AuditScan>;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.rpc?.close();
  }

  private shared(op: AggregateName): Promise<unknown> {
    const running = this.running.get(op);
    if (!running) return this.start(op);
    let next = this.next.get(op);
    if (!next) {
      const after = () => {
        this.next.delete(op);
        return this.start(op);
      };
      next = running.then(after, after);
      this.next.set(op, next);
    }
    return next;
  }

  private start(op: AggregateName): Promise<unknown> {
    const p = this.request(op, []).finally(() => this.running.delete(op));
    this.running.set(op, p);
    return p;
  }

  private request(op: AggregateName, args: unknown[]): Promise<unknown> {
    if (this.closed) return Promise.reject(new Error('store is not open'));
    // A thread that exited (it could not start at the open-files limit, or died) is replaced now:
    // otherwise every later checkpoint and count would fail for the life of the service.
    if (this.rpc && !this.rpc.alive) this.rpc = null;
    this.rpc ??= new ThreadRpc(
      path.join(__dirname, 'aggregate-thread-main.js'),
      this.nice === undefined ? { file: this.file } : { file: this.file, nice: this.nice },
      this.label,
    );
    return this.rpc.request(op, args);
  }
}

/** Aggregates on the caller's connection (`:memory:` databases and in-process stores). */
export class InProcessAggregateReader implements AggregateReader {
  private readonly ops: Aggregates;

  constructor(db: Database.Database) {
    this.ops = prepareAggregates(db);
  }

  async countByState(): Promise<Record<TaskState, number>> {
    return this.ops.countByState();
  }

  async countWaitingByTenant(): Promise<Record<string, number>> {
    return this.ops.countWaitingByTenant();
  }

  async auditScan(now: number, overdueBefore: number, limit: number): Promise<AuditScan> {
    return this.ops.auditScan(now, overdueBefore, limit);
  }

  /** In process the writer's connection checkpoints on its own (`wal_autocheckpoint`). */
  async checkpoint(): Promise<void> {}

  async truncateLog(): Promise<boolean> {
    return this.ops.truncateLog();
  }

  async close(): Promise<void> {}
}
