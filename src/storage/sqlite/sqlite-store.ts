import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { AttemptRecord, ClaimedTask, DueEntry, NewTask, TaskRecord, TaskState } from '../../domain/task';
import {
  AttemptCompletion,
  CancelResult,
  CompletionResult,
  OrphanedAttempt,
  Store,
  StoreConfigError,
  TaskListQuery,
  TaskPage,
} from '../store';
import { GroupCommit } from './group-commit';
import { migrate } from './migrations';
import { prepareCancelTask } from './ops/cancel-task';
import { prepareClaimTasks } from './ops/claim-tasks';
import { prepareCompleteAttempts } from './ops/complete-attempts';
import { prepareInsertTasks } from './ops/insert-tasks';
import { prepareLoadDue } from './ops/load-due';
import { prepareMarkPending } from './ops/mark-pending';
import { prepareReads, TaskReads } from './ops/read-tasks';

interface Ops {
  insertTasks: ReturnType<typeof prepareInsertTasks>;
  loadDue: ReturnType<typeof prepareLoadDue>;
  markPending: ReturnType<typeof prepareMarkPending>;
  claimTasks: ReturnType<typeof prepareClaimTasks>;
  completeAttempts: ReturnType<typeof prepareCompleteAttempts>;
  cancelTask: ReturnType<typeof prepareCancelTask>;
  reads: TaskReads;
}

/**
 * The embedded store: one SQLite file (better-sqlite3) in WAL mode with `synchronous=FULL`, so a
 * commit is on disk before any caller is answered. Writes go through {@link GroupCommit}; reads run
 * directly. Every statement lives in `ops/`, one file per atomic operation.
 */
export class SqliteStore implements Store {
  readonly name = 'sqlite';
  private db: Database.Database | null = null;
  private commit: GroupCommit | null = null;
  private ops: Ops | null = null;

  /** @param file database path (`:memory:` for tests); its folder is created if missing */
  constructor(private readonly file: string) {}

  async open(partitions: number): Promise<void> {
    if (this.file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(this.file)), { recursive: true });
    const db = new Database(this.file);
    try {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      db.pragma('busy_timeout = 5000');
      db.pragma('foreign_keys = ON');
      migrate(db);
      const stored = db.prepare(`SELECT value FROM meta WHERE key = 'partitions'`).pluck().get() as string | undefined;
      if (stored === undefined) {
        db.prepare(`INSERT INTO meta (key, value) VALUES ('partitions', ?)`).run(String(partitions));
      } else if (Number(stored) !== partitions) {
        throw new StoreConfigError(
          `invalid configuration: partitions (env PARTITIONS): the store ${this.file} was created with ${stored} partitions, not ${partitions}`,
        );
      }
    } catch (err) {
      db.close();
      throw err;
    }
    this.db = db;
    this.commit = new GroupCommit(db);
    this.ops = {
      insertTasks: prepareInsertTasks(db),
      loadDue: prepareLoadDue(db),
      markPending: prepareMarkPending(db),
      claimTasks: prepareClaimTasks(db),
      completeAttempts: prepareCompleteAttempts(db),
      cancelTask: prepareCancelTask(db),
      reads: prepareReads(db),
    };
  }

  async close(): Promise<void> {
    if (!this.db) return;
    this.commit?.close();
    this.db.close();
    this.db = null;
    this.ops = null;
  }

  /** Group-commit statistics (commits, operations, largest batch). */
  commitStats(): GroupCommit['stats'] | null {
    return this.commit?.stats ?? null;
  }

  private get o(): Ops {
    if (!this.ops) throw new Error('store is not open');
    return this.ops;
  }

  private write<T>(op: () => T): Promise<T> {
    if (!this.commit) return Promise.reject(new Error('store is not open'));
    return this.commit.run(op);
  }

  async ping(): Promise<boolean> {
    return this.db !== null && this.db.prepare('SELECT 1').pluck().get() === 1;
  }

  async insertTasks(tasks: NewTask[]): Promise<void> {
    const op = this.o.insertTasks;
    return this.write(() => op(tasks));
  }

  async getTask(id: string): Promise<TaskRecord | null> {
    return this.o.reads.getTask(id);
  }

  async getAttempts(id: string): Promise<AttemptRecord[]> {
    return this.o.reads.getAttempts(id);
  }

  async listTasks(query: TaskListQuery): Promise<TaskPage> {
    return this.o.reads.listTasks(query);
  }

  async loadDue(partition: number, until: number, limit: number): Promise<DueEntry[]> {
    return this.o.loadDue(partition, until, limit);
  }

  async markPending(ids: string[], now: number): Promise<string[]> {
    const op = this.o.markPending;
    return this.write(() => op(ids, now));
  }

  async claimTasks(ids: string[], workerId: string, now: number, leaseMs: number): Promise<ClaimedTask[]> {
    const op = this.o.claimTasks;
    return this.write(() => op(ids, workerId, now, leaseMs));
  }

  async completeAttempts(completions: AttemptCompletion[], now: number): Promise<CompletionResult[]> {
    const op = this.o.completeAttempts;
    return this.write(() => op(completions, now));
  }

  async cancelTask(id: string, now: number): Promise<CancelResult> {
    const op = this.o.cancelTask;
    return this.write(() => op(id, now));
  }

  async findOrphanedAttempts(limit: number): Promise<OrphanedAttempt[]> {
    return this.o.reads.findOrphanedAttempts(limit);
  }

  async countByState(): Promise<Record<TaskState, number>> {
    return this.o.reads.countByState();
  }
}
