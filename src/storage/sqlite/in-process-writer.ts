import type Database from 'better-sqlite3';
import { GroupCommit } from './group-commit';
import { isDeferred, prepareWriteOps, rowsOf, WriteOpName, WriteOps, Writer, WriterStats } from './write-ops';
import { newSpaceBytes } from './young-generation';

/**
 * Writes on the caller's thread (used for `:memory:` databases, which one thread cannot share with
 * another, and when `writerThread: false`). Commits block the event loop while they run.
 */
export class InProcessWriter implements Writer {
  private readonly ops: WriteOps;
  private readonly commit: GroupCommit;

  /**
   * @param afterCommit runs after each COMMIT; if it throws, the batch's callers get its error
   *   (the store's file deleted or replaced: see GroupCommitLimits.afterCommit)
   */
  constructor(db: Database.Database, afterCommit?: () => void) {
    this.ops = prepareWriteOps(db);
    this.commit = new GroupCommit(db, afterCommit ? { afterCommit } : {});
  }

  run<K extends WriteOpName>(op: K, args: Parameters<WriteOps[K]>): Promise<ReturnType<WriteOps[K]>> {
    const fn = this.ops[op] as (...a: unknown[]) => ReturnType<WriteOps[K]>;
    return this.commit.run(() => fn(...args), rowsOf(op, args), isDeferred(op));
  }

  async close(): Promise<void> {
    this.commit.close();
  }

  async stats(): Promise<WriterStats> {
    return { ...this.commit.stats, newSpaceBytes: newSpaceBytes() };
  }
}
