import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { WriteOpName, WriteOps, Writer } from './write-ops';

interface Pending {
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

/**
 * Runs the store's writes on a dedicated thread (`writer-thread-main.ts`), so SQLite's page work
 * and fsyncs use the second core instead of blocking the event loop that serves HTTP and the
 * actors. Same guarantee as in-process: a call resolves after its transaction committed. Errors
 * come back with their `name`, `message` and SQLite `code`. If the thread dies, every pending and
 * later call is rejected (nothing is acknowledged that was not committed).
 */
export class ThreadWriter implements Writer {
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private dead: Error | null = null;

  /** @param file the database file (already migrated by the main connection) */
  constructor(file: string) {
    this.worker = new Worker(path.join(__dirname, 'writer-thread-main.js'), { workerData: { file } });
    this.worker.on('message', (msg: { id: number; ok: boolean; result?: unknown; error?: { name: string; message: string; code?: string } }) => {
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      if (msg.ok) p.resolve(msg.result);
      else p.reject(Object.assign(new Error(msg.error?.message), { name: msg.error?.name, code: msg.error?.code }));
    });
    this.worker.on('error', (err) => this.fail(err));
    this.worker.on('exit', (code) => this.fail(new Error(`SQLite writer thread exited (code ${code})`)));
  }

  run<K extends WriteOpName>(op: K, args: Parameters<WriteOps[K]>): Promise<ReturnType<WriteOps[K]>> {
    return this.request(op, args) as Promise<ReturnType<WriteOps[K]>>;
  }

  async close(): Promise<void> {
    if (this.dead) return;
    const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    await this.request('close', []);
    await exited;
  }

  stats() {
    return this.request('stats', []) as Promise<{ commits: number; operations: number; largestBatch: number }>;
  }

  private request(op: string, args: unknown[]): Promise<unknown> {
    if (this.dead) return Promise.reject(this.dead);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, op, args });
    });
  }

  private fail(err: Error): void {
    this.dead ??= err;
    for (const p of this.pending.values()) p.reject(this.dead);
    this.pending.clear();
  }
}
