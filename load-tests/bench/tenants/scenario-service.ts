/**
 * One fresh service per scenario: a temp dir holding the SQLite file, the service log, a
 * `send_email` handler module and a config file named by `SCHEDULER_CONFIG` (merged by the service
 * over config/default.json) that registers the handler and its start limit:
 *
 *   { "handlers": { "send_email": "<temp dir>/send-email-handler.js" },
 *     "rateLimits": { "send_email": { "ratePerSecond": 100, "burst": 10 } } }
 *
 * The shared Service class (service-process.ts) starts, samples and stops the process; this file
 * adds the config file, the HTTP clients of the scenario and the temp dir's removal.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { HttpClient } from '../http-client';
import { sleep } from '../run-control';
import { freePort, Service } from '../service-process';
import { round } from '../stats';
import type { TenantsOptions } from './tenants-options';

/** The handler module the service loads for `send_email`: returns at once. */
const SEND_EMAIL_HANDLER = 'module.exports = async () => ({ ok: true });\n';

/** A scenario's service: create(), start(), client(), stop() (or killNow() as a last resort). */
export class ScenarioService {
  private readonly clients: HttpClient[] = [];
  readonly configPath: string;
  readonly serviceConfig: Record<string, unknown>;

  private constructor(
    readonly name: string,
    readonly tmpDir: string,
    readonly svc: Service,
    readonly o: TenantsOptions,
  ) {
    const handlerPath = path.join(tmpDir, 'send-email-handler.js');
    fs.writeFileSync(handlerPath, SEND_EMAIL_HANDLER);
    this.serviceConfig = {
      handlers: { send_email: handlerPath },
      rateLimits: { send_email: { ratePerSecond: o.rlRate, burst: o.rlBurst } },
    };
    this.configPath = path.join(tmpDir, 'scheduler-config.json');
    fs.writeFileSync(this.configPath, `${JSON.stringify(this.serviceConfig, null, 2)}\n`);
  }

  /** Creates the temp dir and the config on a free port; nothing runs until start(). */
  static async create(name: string, o: TenantsOptions): Promise<ScenarioService> {
    const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), `sched-bench-tenants-${name}-`));
    const port = await freePort();
    return new ScenarioService(name, tmpDir, new Service(tmpDir, port, o), o);
  }

  /** A new keep-alive client of this service (closed by stop()). */
  client(maxSockets = 16): HttpClient {
    const c = new HttpClient('127.0.0.1', this.svc.port, maxSockets);
    this.clients.push(c);
    return c;
  }

  /**
   * Starts the service with `SCHEDULER_CONFIG` set for the child only (the variable is restored
   * in this process right after the spawn), waits for /readyz and for the workers to report in.
   * @returns the service facts for the report
   * @throws Error when it does not become ready (60 s) or on the run's abort
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
    await sleep(300); // let the workers report in
    return {
      pid: this.svc.child?.pid ?? null,
      ready_after_ms: round(readyMs, 0),
      worker_pids: this.svc.sampler?.lastWorkerPids ?? [],
      config_file: this.serviceConfig,
    };
  }

  /** Stops the service (SIGTERM, SIGKILL after 10 s, orphans), closes the clients, removes the temp dir. */
  async stop(): Promise<Record<string, unknown>> {
    const peaks = this.svc.sampler?.overallPeaks() ?? null;
    for (const c of this.clients) c.close();
    const shutdown = await this.svc.stop(10_000);
    if (this.o.keepTmp) process.stderr.write(`[bench-tenants] ${this.name}: temp dir kept: ${this.tmpDir}\n`);
    else fs.rmSync(this.tmpDir, { recursive: true, force: true });
    return { resources: peaks, shutdown };
  }

  /** Synchronous last resort (hard timeout, exit): SIGKILL the service and its workers, remove the temp dir. */
  killNow(): void {
    this.svc.killNow();
    if (!this.o.keepTmp) fs.rmSync(this.tmpDir, { recursive: true, force: true });
  }

  /** The last lines of the service log. */
  logTail(lines: number): string {
    return this.svc.logTail(lines);
  }
}
