import path from 'node:path';
import type Database from 'better-sqlite3';
import { DueEntry } from '../../domain/task';
import { prepareLoadDue } from './ops/load-due';
import { ThreadRpc } from './thread-rpc';

/** The partition owners' window reads (ops/load-due.ts), answered asynchronously. */
export interface DueReader {
  /**
   * Waiting tasks of `partition` due ≤ `until` (epoch ms), at most `limit`, in (due_at, seq) order.
   * @throws the read's error (a SQLite error, or the thread's exit)
   */
  loadDue(partition: number, until: number, limit: number): Promise<DueEntry[]>;
  close(): Promise<void>;
}

/**
 * The window reads on their own thread and connection (file stores). A window read steps over the
 * other partitions' index entries in its due range (migration 011), so when a herd of tasks is due
 * at one instant each read costs about partitions × limit index entries: measured with 100,000
 * tasks due at one second, 64 owners' reads took 25 ms each and, run one after another in one
 * turn of the event loop, held the main thread for up to 1.6 s, so every HTTP request (another
 * tenant's submissions) and every dispatch waited. Here they cost the event loop one message each
 * and run one at a time on the thread, in the order asked. Normal priority: dispatch needs them.
 * A WAL reader: it never blocks the writer and reads committed data only, like the main
 * connection did. A read may now overlap the owner's other messages; the owner already takes a
 * row it has handed out or released since as a duplicate or a stale entry, as with the
 * asynchronous reads of the other stores, and the claim is a compare-and-set on the state.
 */
export class ThreadDueReader implements DueReader {
  private rpc: ThreadRpc | null = null;
  private closed = false;

  /** @param file the database file (already migrated); its thread starts at the first read */
  constructor(private readonly file: string) {}

  loadDue(partition: number, until: number, limit: number): Promise<DueEntry[]> {
    if (this.closed) return Promise.reject(new Error('store is not open'));
    // A thread that exited (e.g. it could not open the file during a store fault) is replaced at
    // the next read: the owners retry their reads, and without them nothing scheduled is dispatched.
    if (this.rpc && !this.rpc.alive) this.rpc = null;
    this.rpc ??= new ThreadRpc(path.join(__dirname, 'due-read-thread-main.js'), { file: this.file }, 'SQLite window reads');
    return this.rpc.request('loadDue', [partition, until, limit]) as Promise<DueEntry[]>;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.rpc?.close();
  }
}

/** The window reads on the caller's connection (`:memory:` databases and in-process stores). */
export class InProcessDueReader implements DueReader {
  private readonly read: (partition: number, until: number, limit: number) => DueEntry[];

  constructor(db: Database.Database) {
    this.read = prepareLoadDue(db);
  }

  async loadDue(partition: number, until: number, limit: number): Promise<DueEntry[]> {
    return this.read(partition, until, limit);
  }

  async close(): Promise<void> {}
}
