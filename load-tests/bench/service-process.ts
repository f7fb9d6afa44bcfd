/**
 * The service under test: a free port, starting `node dist/src/main.js` with its environment,
 * waiting for /readyz, the log tail, and stopping it (SIGTERM, SIGKILL after a grace period, then
 * any forked worker that outlived it).
 */
import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { HttpClient } from './http-client';
import { ROOT, SERVICE_ENTRY, SERVICE_NODE_FLAGS } from './paths';
import { readStat, TreeSampler } from './proc-sampler';
import { checkAborted, run, sleep } from './run-control';

/** The settings the service is started with (a harness's options carry them). */
export interface ServiceSettings {
  /** WORKERS, WORKER_CONCURRENCY, PARTITIONS; null = the service's config. */
  workers: number | null;
  workerConcurrency: number | null;
  partitions: number | null;
  /** LOG_LEVEL. */
  logLevel: string;
  /** Run the service with --cpu-prof into this dir (profiles written when it exits); absent or null = no profile. */
  cpuProfDir?: string | null;
  /** More environment for the service (e.g. SCHEDULER_STORE, POSTGRES_URL); wins over the bench's own. */
  extraEnv?: Record<string, string>;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      if (addr === null || typeof addr === 'string') return reject(new Error('no port'));
      const port = addr.port;
      srv.close(() => resolve(port));
    });
  });
}

export class Service {
  child: ChildProcess | null = null;
  sampler: TreeSampler | null = null;
  exited: Promise<void> = Promise.resolve();
  exitInfo: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  private logFd: number | null = null;
  stopping = false;

  constructor(
    readonly tmpDir: string,
    readonly port: number,
    readonly opts: ServiceSettings,
  ) {}

  get logPath(): string {
    return path.join(this.tmpDir, 'service.log');
  }

  start(): void {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PORT: String(this.port),
      HOST: '127.0.0.1',
      SQLITE_PATH: path.join(this.tmpDir, 'scheduler.db'),
      LOG_LEVEL: this.opts.logLevel,
    };
    delete env.NODE_ENV;
    if (this.opts.workers !== null) env.WORKERS = String(this.opts.workers);
    if (this.opts.workerConcurrency !== null) env.WORKER_CONCURRENCY = String(this.opts.workerConcurrency);
    if (this.opts.partitions !== null) env.PARTITIONS = String(this.opts.partitions);
    Object.assign(env, this.opts.extraEnv ?? {});
    const nodeArgs: string[] = [...SERVICE_NODE_FLAGS];
    if (this.opts.cpuProfDir) {
      fs.mkdirSync(this.opts.cpuProfDir, { recursive: true });
      nodeArgs.push('--cpu-prof', `--cpu-prof-dir=${this.opts.cpuProfDir}`);
    }
    this.logFd = fs.openSync(this.logPath, 'a');
    const child = spawn(process.execPath, [...nodeArgs, SERVICE_ENTRY], {
      cwd: ROOT,
      env,
      stdio: ['ignore', this.logFd, this.logFd],
    });
    this.child = child;
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exitInfo = { code, signal };
        if (!this.stopping) run.abort(new Error(`service exited unexpectedly (code ${code}, signal ${signal}); log: ${this.logTail(15)}`));
        resolve();
      });
      child.once('error', (err) => {
        this.exitInfo = { code: null, signal: null };
        run.abort(new Error(`service could not start: ${err.message}`));
        resolve();
      });
    });
    if (child.pid !== undefined) {
      this.sampler = new TreeSampler(child.pid);
      this.sampler.start(200);
    }
  }

  async waitReady(client: HttpClient, timeoutMs = 60_000): Promise<number> {
    const t0 = performance.now();
    for (;;) {
      checkAborted();
      try {
        const res = await client.request('GET', '/readyz', undefined, 2000);
        if (res.status === 200) return performance.now() - t0;
      } catch (err) {
        checkAborted();
      }
      if (performance.now() - t0 > timeoutMs) throw new Error(`service not ready within ${timeoutMs / 1000} s; log: ${this.logTail(15)}`);
      await sleep(100);
    }
  }

  logTail(lines: number): string {
    try {
      const txt = fs.readFileSync(this.logPath, 'utf8').trimEnd().split('\n');
      return txt.slice(-lines).join('\n');
    } catch {
      return '(no log)';
    }
  }

  /** SIGTERM, SIGKILL after `graceMs`; then SIGKILL any forked worker that outlived it. */
  async stop(graceMs = 10_000): Promise<{ graceful: boolean; exit: Service['exitInfo']; killed_orphans: number }> {
    this.stopping = true;
    const child = this.child;
    let graceful = true;
    if (child && this.exitInfo === null) {
      this.sampler?.tick(); // remember the current workers
      child.kill('SIGTERM');
      const timedOut = await Promise.race([
        this.exited.then(() => false),
        new Promise<boolean>((r) => setTimeout(() => r(true), graceMs).unref()),
      ]);
      if (timedOut) {
        graceful = false;
        child.kill('SIGKILL');
        await Promise.race([this.exited, new Promise((r) => setTimeout(r, 5000).unref())]);
      }
    }
    this.sampler?.stop();
    // Forked workers normally exit right after the service; give them a moment before SIGKILL.
    for (let waited = 0; waited < 3000 && this.survivors().length > 0; waited += 100) await new Promise((r) => setTimeout(r, 100));
    const killed = this.killOrphans();
    if (this.logFd !== null) {
      fs.closeSync(this.logFd);
      this.logFd = null;
    }
    return { graceful, exit: this.exitInfo, killed_orphans: killed };
  }

  /** Synchronous last resort (hard timeout): SIGKILL the service and its workers. */
  killNow(): void {
    this.stopping = true;
    try {
      if (this.child && this.exitInfo === null) this.child.kill('SIGKILL');
    } catch {
      /* gone */
    }
    this.killOrphans();
  }

  /** Processes this service forked that are still alive (same pid and start time, not zombies). */
  private survivors(): number[] {
    const out: number[] = [];
    for (const [pid, info] of this.sampler?.seen ?? []) {
      const st = readStat(pid);
      if (st && st.startTime === info.startTime && st.state !== 'Z') out.push(pid);
    }
    return out;
  }

  /** SIGKILL the survivors; returns how many were killed. */
  private killOrphans(): number {
    let n = 0;
    for (const pid of this.survivors()) {
      try {
        process.kill(pid, 'SIGKILL');
        n++;
      } catch {
        /* gone */
      }
    }
    return n;
  }
}
