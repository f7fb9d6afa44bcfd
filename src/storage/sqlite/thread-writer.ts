import path from 'node:path';
import { ThreadRpc } from './thread-rpc';
import type { FileIdentity } from './store-faults';
import { WriteOpName, WriteOps, Writer } from './write-ops';

/**
 * Runs the store's writes on a dedicated thread (`writer-thread-main.ts`), so SQLite's page work
 * and fsyncs use the second core instead of blocking the event loop that serves HTTP and the
 * actors. Same guarantee as in-process: a call resolves after its transaction committed. If the
 * thread dies, every pending and later call is rejected (nothing is acknowledged that was not
 * committed).
 */
export class ThreadWriter implements Writer {
  private readonly rpc: ThreadRpc;

  /**
   * @param file the database file (already migrated by the main connection)
   * @param identity the file the main connection opened: a commit is refused once the path names another or none
   * @param wal its write-ahead log as the main connection opened it (null: not watched); likewise
   */
  constructor(file: string, identity: FileIdentity | null, wal: FileIdentity | null = null) {
    // Its young generation grows to the process's bound under load anyway (every claim and
    // completion allocates there): at it from the start, the service's memory is flat from its
    // first minutes instead of taking a step at some later flood (young-generation.ts).
    this.rpc = new ThreadRpc(path.join(__dirname, 'writer-thread-main.js'), { file, identity, wal }, 'SQLite writer', {
      fullYoungGeneration: true,
    });
  }

  /**
   * Resolves once the thread runs: the process's young-generation flag is back to its own value
   * then, so threads made after this start at the usual size.
   */
  started(): Promise<void> {
    return this.rpc.online;
  }

  run<K extends WriteOpName>(op: K, args: Parameters<WriteOps[K]>): Promise<ReturnType<WriteOps[K]>> {
    return this.rpc.request(op, args) as Promise<ReturnType<WriteOps[K]>>;
  }

  close(): Promise<void> {
    return this.rpc.close();
  }

  stats() {
    return this.rpc.request('stats', []) as ReturnType<Writer['stats']>;
  }
}
