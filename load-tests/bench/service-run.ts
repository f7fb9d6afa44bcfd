/**
 * The one-service skeleton of bench-throughput and bench-cron: a fresh temp dir and a free port,
 * the service started and waited for (/readyz, then its workers), the body run, and in every case
 * the resource peaks recorded, the service stopped (SIGTERM, SIGKILL after 10 s) and the temp dir
 * removed (or kept with --keep-tmp). Used inside runHarness (run-harness.ts).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { HttpClient } from './http-client';
import { sleep } from './run-control';
import type { RunGuard } from './run-harness';
import { freePort, Service, ServiceSettings } from './service-process';
import { round } from './stats';

/** What withService needs. */
export interface ServiceRunSpec {
  /** Log prefix, e.g. `[bench-cron]`. */
  tag: string;
  /** Temp dir name prefix, e.g. `sched-bench-cron-`. */
  tmpPrefix: string;
  /** The service's settings and whether to keep the temp dir. */
  settings: ServiceSettings & { keepTmp: boolean };
  /** Sockets of the HTTP client. */
  maxSockets: number;
  /** The report: `service.{pid, ready_after_ms, worker_pids, shutdown}`, `resources` and `errors` are filled. */
  report: Record<string, any>;
  guard: RunGuard;
  /** Called in the cleanup after the resource peaks are taken, before the service is stopped. */
  atEnd?: () => void;
  /** Called with the temp dir before the service starts (e.g. to put a database in it). */
  prepare?: (tmpDir: string) => Promise<void>;
}

/** The running service handed to the body. */
export interface ServiceRun {
  svc: Service;
  client: HttpClient;
}

/**
 * Runs `body` against a fresh service. A failure to start, or an error thrown by `body`, is
 * recorded in `report.errors`; the service log tail is printed when anything failed.
 * @param body returns whether it failed
 * @returns whether anything failed
 */
export async function withService(spec: ServiceRunSpec, body: (r: ServiceRun) => Promise<boolean>): Promise<boolean> {
  const { report, settings } = spec;
  const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), spec.tmpPrefix));
  const port = await freePort();
  const svc = new Service(tmpDir, port, settings);
  const client = new HttpClient('127.0.0.1', port, spec.maxSockets);
  spec.guard.onKill(
    () => {
      svc.killNow();
      if (!settings.keepTmp) fs.rmSync(tmpDir, { recursive: true, force: true });
    },
    () => svc.child !== null && svc.exitInfo === null,
  );

  let failed = false;
  try {
    await spec.prepare?.(tmpDir);
    svc.start();
    report.service.pid = svc.child?.pid ?? null;
    report.service.ready_after_ms = round(await svc.waitReady(client), 0);
    await sleep(300); // let the workers report in
    report.service.worker_pids = svc.sampler?.lastWorkerPids ?? [];
    failed = await body({ svc, client });
  } catch (err) {
    failed = true;
    report.errors.push((err as Error).message);
  } finally {
    if (svc.sampler) report.resources = svc.sampler.overallPeaks();
    spec.atEnd?.();
    client.close();
    try {
      report.service.shutdown = await svc.stop(10_000);
    } catch (err) {
      report.errors.push(`stop: ${(err as Error).message}`);
    }
    if (failed) process.stderr.write(`${spec.tag} service log tail:\n${svc.logTail(30)}\n`);
    if (settings.keepTmp) process.stderr.write(`${spec.tag} temp dir kept: ${tmpDir}\n`);
    else fs.rmSync(tmpDir, { recursive: true, force: true });
  }
  return failed;
}
