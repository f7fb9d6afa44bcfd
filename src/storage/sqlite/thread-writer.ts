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
   */
  constructor(file: string, identity: FileIdentity | null) {
    this.rpc = new ThreadRpc(path.join(__dirname, 'writer-thread-main.js'), { file, identity }, 'SQLite writer');
  }

  run<K extends WriteOpName>(op: K, args: Parameters<WriteOps[K]>): Promise<ReturnType<WriteOps[K]>> {
    return this.rpc.request(op, args) as Promise<ReturnType<WriteOps[K]>>;
  }

  close(): Promise<void> {
    return this.rpc.close();
  }

  stats() {
    return this.rpc.request('stats', []) as Promise<{ commits: number; operations: number; largestBatch: number }>;
  }
}
