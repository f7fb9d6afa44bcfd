import { Worker } from 'node:worker_threads';
import { errorOfThread, ThreadError } from './thread-errors';
import { startAtFullYoungGeneration } from './young-generation';

interface Pending {
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

/** A reply of a store thread: `{id, ok, result}` or `{id, ok: false, error}`. */
export interface ThreadReply {
  id: number;
  ok: boolean;
  result?: unknown;
  error?: ThreadError;
}

/**
 * Request/reply over a store thread (worker_threads) that answers `{id, op, args}` with a
 * {@link ThreadReply}: the writer thread and the aggregate-reads thread. Errors come back with
 * their `name`, `message` and SQLite `code`, and a typed storage error as its class again
 * (./thread-errors.ts). If the thread dies, every pending and later request is rejected.
 */
export class ThreadRpc {
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private dead: Error | null = null;
  /** Resolves once the thread runs (its isolate exists), or has failed or exited; never rejects. */
  readonly online: Promise<void>;

  /**
   * @param script absolute path of the thread's entry module
   * @param workerData handed to the thread (e.g. `{file}`)
   * @param label names the thread in the error when it exits
   * @param options.fullYoungGeneration start the thread's V8 young generation at the process's
   *   bound (./young-generation.ts): for a thread that allocates enough to grow there anyway
   */
  constructor(script: string, workerData: unknown, label: string, options: { fullYoungGeneration?: boolean } = {}) {
    const start = () => new Worker(script, { workerData });
    this.worker = options.fullYoungGeneration ? startAtFullYoungGeneration(start) : start();
    const worker = this.worker;
    this.online = new Promise<void>((resolve) => {
      worker.once('online', () => resolve());
      worker.once('error', () => resolve());
      worker.once('exit', () => resolve());
    });
    this.worker.on('message', (msg: ThreadReply) => {
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      if (msg.ok) p.resolve(msg.result);
      else p.reject(errorOfThread(msg.error));
    });
    this.worker.on('error', (err) => this.fail(err));
    this.worker.on('exit', (code) => this.fail(new Error(`${label} thread exited (code ${code})`)));
  }

  /** False once the thread has exited or failed: every request is then refused. */
  get alive(): boolean {
    return this.dead === null;
  }

  /** Sends `{id, op, args}`; resolves with the thread's result. */
  request(op: string, args: unknown[]): Promise<unknown> {
    if (this.dead) return Promise.reject(this.dead);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, op, args });
    });
  }

  /** Asks the thread to close (op `close`) and waits until it exited. */
  async close(): Promise<void> {
    if (this.dead) return;
    const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    await this.request('close', []);
    await exited;
  }

  private fail(err: Error): void {
    this.dead ??= err;
    for (const p of this.pending.values()) p.reject(this.dead);
    this.pending.clear();
  }
}
