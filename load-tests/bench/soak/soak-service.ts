/**
 * The soak's service: a temp dir holding the SQLite store, the service log, the side-effect
 * handler module (effect-log.ts) and a config file named by `SCHEDULER_CONFIG` that registers the
 * handler for every soak task type. The shared Service class (../service-process.ts) starts,
 * samples and stops the process.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { HttpClient } from '../http-client';
import { freePort, Service } from '../service-process';
import { round } from '../stats';
import { handlerSource, KINDS, taskType } from './effect-log';
import type { SoakOptions } from './soak-options';

/** File sizes of the store (bytes; 0 when absent). */
export interface StoreFiles {
  db_bytes: number;
  wal_bytes: number;
}

const size = (f: string): number => {
  try {
    return fs.statSync(f).size;
  } catch {
    return 0;
  }
};

/** create(), start(), client(), storeFiles(), stop() (or killNow() as a last resort). */
export class SoakService {
  private readonly clients: HttpClient[] = [];
  readonly effectsDir: string;
  private readonly configPath: string;

  private constructor(
    readonly tmpDir: string,
    readonly svc: Service,
    private readonly o: SoakOptions,
  ) {
    this.effectsDir = path.join(tmpDir, 'effects');
    fs.mkdirSync(this.effectsDir);
    const handler = path.join(tmpDir, 'soak-handler.js');
    fs.writeFileSync(handler, handlerSource(this.effectsDir));
    const handlers = Object.fromEntries(KINDS.map((k) => [taskType(k), handler]));
    this.configPath = path.join(tmpDir, 'scheduler-config.json');
    const retention = o.retentionMs === null ? {} : { resultRetentionMs: o.retentionMs };
    fs.writeFileSync(this.configPath, `${JSON.stringify({ handlers, ...retention }, null, 2)}\n`);
  }

  /** Creates the temp dir, handler and config on a free port; nothing runs until start(). */
  static async create(o: SoakOptions): Promise<SoakService> {
    const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sched-bench-soak-'));
    const port = await freePort();
    return new SoakService(tmpDir, new Service(tmpDir, port, o), o);
  }

  /** A new keep-alive client (closed by stop()). */
  client(maxSockets = 16): HttpClient {
    const c = new HttpClient('127.0.0.1', this.svc.port, maxSockets);
    this.clients.push(c);
    return c;
  }

  /**
   * Starts the service with `SCHEDULER_CONFIG` for the child only and waits for /readyz.
   * @throws Error when it is not ready within 60 s, or on the run's abort
   */
  async start(): Promise<Record<string, unknown>> {
    const prev = process.env.SCHEDULER_CONFIG;
    process.env.SCHEDULER_CONFIG = this.configPath;
    try {
      this.svc.start();
    } finally {
      if (prev === undefined) delete process.env.SCHEDULER_CONFIG;
      else process.env.SCHEDULER_CONFIG = prev;
    }
    const readyMs = await this.svc.waitReady(this.client(2));
    return { pid: this.svc.child?.pid ?? null, ready_after_ms: round(readyMs, 0), temp_dir: this.tmpDir };
  }

  /** Sizes of the SQLite file and its WAL now. */
  storeFiles(): StoreFiles {
    const db = path.join(this.tmpDir, 'scheduler.db');
    return { db_bytes: size(db), wal_bytes: size(`${db}-wal`) };
  }

  /** Stops the service, closes the clients, removes the temp dir unless --keep-tmp. */
  async stop(): Promise<Record<string, unknown>> {
    const peaks = this.svc.sampler?.overallPeaks() ?? null;
    for (const c of this.clients) c.close();
    const shutdown = await this.svc.stop(10_000);
    if (this.o.keepTmp) process.stderr.write(`[bench-soak] temp dir kept: ${this.tmpDir}\n`);
    else fs.rmSync(this.tmpDir, { recursive: true, force: true });
    return { resources: peaks, shutdown };
  }

  /** Synchronous last resort: SIGKILL the service and its workers, remove the temp dir. */
  killNow(): void {
    this.svc.killNow();
    if (!this.o.keepTmp) fs.rmSync(this.tmpDir, { recursive: true, force: true });
  }
}
