/**
 * The bench's handle on a forked peer-worker.ts process: fork, wait until it is connected, start
 * it with a completion target, wait for that target (bounded), fetch the lateness report, stop.
 * CPU and RSS of the process come from the same /proc sampler the service uses.
 */
import { ChildProcess, fork } from 'node:child_process';
import path from 'node:path';
import { TreeSampler } from '../bench/proc-sampler';
import { abortReason, run } from '../bench/run-control';
import type { WorkerConfig } from './peer-worker';

export interface DoneInfo {
  /** Date.now() (ms) when the child saw the target reached; null when the time bound hit first. */
  at: number | null;
  completed: number;
  failed: number;
  /** PostgreSQL peers: Date.now() (ms) when the Nth job completed in the process, before its database confirmed it. */
  handlerAt?: number | null;
}

export interface LatenessReport {
  lateness_ms: number[];
  early: number;
  completed: number;
  failed: number;
}

export class PeerWorkerProcess {
  private child: ChildProcess | null = null;
  private listeners = new Set<(m: Record<string, any>) => void>();
  private lastProgress = { completed: 0, failed: 0 };
  private errors: string[] = [];
  sampler: TreeSampler | null = null;

  constructor(readonly cfg: WorkerConfig) {}

  /** Forks the child and resolves when it reports `ready` (connected to Redis). */
  async start(timeoutMs = 30_000): Promise<void> {
    const entry = path.join(__dirname, 'peer-worker.js');
    const child = fork(entry, [JSON.stringify(this.cfg)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.child = child;
    child.on('message', (m: Record<string, any>) => {
      if (m.ev === 'progress') this.lastProgress = { completed: m.completed, failed: m.failed };
      if (m.ev === 'error') this.errors.push(String(m.message));
      for (const l of [...this.listeners]) l(m);
    });
    child.once('exit', (code, signal) => {
      for (const l of [...this.listeners]) l({ ev: 'exit', code, signal });
    });
    if (child.pid !== undefined) {
      this.sampler = new TreeSampler(child.pid);
      this.sampler.start(200);
    }
    await this.next((m) => m.ev === 'ready', timeoutMs, 'worker ready');
  }

  /** BullMQ: has the child consume `expect` jobs from `queue` (enqueued by the caller) with a second worker; resolves when done. */
  async warmup(queue: string, expect: number, timeoutMs: number): Promise<void> {
    const warmed = this.next((m) => m.ev === 'warmed', timeoutMs, 'warm-up');
    this.child?.send({ cmd: 'warmup', queue, expect });
    await warmed;
  }

  /** Starts processing; resolves with the child's clock reading at start. */
  async run(expect: number): Promise<number> {
    const started = this.next((m) => m.ev === 'started', 10_000, 'worker started');
    this.child?.send({ cmd: 'start', expect });
    return (await started).at as number;
  }

  /** Waits until the child has completed its target, or `timeoutMs` (then `at` is null). */
  async waitDone(timeoutMs: number): Promise<DoneInfo> {
    try {
      const m = await this.next((x) => x.ev === 'done', timeoutMs, 'completion');
      return {
        at: m.at as number,
        completed: m.completed as number,
        failed: this.lastProgress.failed,
        handlerAt: (m.handler_at as number) ?? null,
      };
    } catch (err) {
      if (run.signal.aborted) throw err;
      if (!(err as Error).message.startsWith('timed out')) throw err;
      return { at: null, ...this.lastProgress };
    }
  }

  async report(): Promise<LatenessReport> {
    const reply = this.next((m) => m.ev === 'report', 10_000, 'report');
    this.child?.send({ cmd: 'report' });
    return (await reply) as unknown as LatenessReport;
  }

  get errorMessages(): string[] {
    return this.errors;
  }

  /** Asks the child to close; SIGKILL after `graceMs`. */
  async stop(graceMs = 10_000): Promise<void> {
    const child = this.child;
    this.sampler?.stop();
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    try {
      child.send({ cmd: 'stop' });
    } catch {
      /* channel closed */
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  }

  /** Synchronous last resort. */
  killNow(): void {
    if (this.child && this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }

  private next(pred: (m: Record<string, any>) => boolean, timeoutMs: number, what: string): Promise<Record<string, any>> {
    return new Promise((resolve, reject) => {
      const done = (fn: () => void) => {
        clearTimeout(timer);
        this.listeners.delete(listener);
        run.signal.removeEventListener('abort', onAbort);
        fn();
      };
      const listener = (m: Record<string, any>) => {
        if (m.ev === 'exit')
          done(() =>
            reject(
              new Error(
                `${this.cfg.system} worker exited (code ${m.code}, signal ${m.signal}) while waiting for ${what}; ${this.errors.join('; ')}`,
              ),
            ),
          );
        else if (m.ev === 'error' && what !== 'completion') done(() => reject(new Error(`${this.cfg.system} worker: ${m.message}`)));
        else if (pred(m)) done(() => resolve(m));
      };
      const onAbort = () => done(() => reject(abortReason()));
      const timer = setTimeout(() => done(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`))), timeoutMs);
      this.listeners.add(listener);
      run.signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}
