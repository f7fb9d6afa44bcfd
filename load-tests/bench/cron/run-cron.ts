/**
 * One bench-cron run from start to end: parses the flags, starts the service on a free port with
 * a temp dir (the shared Service class), runs the cron scenario, and always stops the service and
 * removes the temp dir (overall timeout, hard failsafe, SIGINT/SIGTERM), as run.ts does for
 * bench-throughput. Returns the exit code (0 ran to the end, 1 failed, 2 usage).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { HttpClient } from '../http-client';
import { SERVICE_ENTRY } from '../paths';
import { run, sleep } from '../run-control';
import { freePort, Service } from '../service-process';
import { round } from '../stats';
import { CRON_HELP, CronOptions, parseCronOptions, serviceOptions } from './cron-options';
import { initialCronReport, writeCronReport } from './cron-report';
import { cronScenario } from './cron-scenario';

export async function mainCron(): Promise<number> {
  let opts: CronOptions | null;
  try {
    opts = parseCronOptions(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n\n${CRON_HELP}`);
    return 2;
  }
  if (opts === null) {
    process.stdout.write(CRON_HELP);
    return 0;
  }
  if (!fs.existsSync(SERVICE_ENTRY)) {
    process.stderr.write(`${SERVICE_ENTRY} not found: run \`npm run build\` first\n`);
    return 2;
  }
  const o = opts;
  const startedWall = Date.now();
  const timeoutMs = o.timeoutS * 1000;
  const overall = setTimeout(() => run.abort(new Error(`overall timeout of ${o.timeoutS} s reached`)), timeoutMs);
  overall.unref();

  const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sched-bench-cron-'));
  const port = await freePort();
  const svc = new Service(tmpDir, port, serviceOptions(o));
  const client = new HttpClient('127.0.0.1', port, Math.max(16, o.concurrency * 2));

  const cleanupSync = () => {
    svc.killNow();
    if (!o.keepTmp) fs.rmSync(tmpDir, { recursive: true, force: true });
  };
  const hard = setTimeout(() => {
    process.stderr.write('bench-cron: hard timeout, killing the service\n');
    cleanupSync();
    process.exit(124);
  }, timeoutMs + 25_000);
  hard.unref();
  const onSignal = (sig: NodeJS.Signals) => {
    if (run.signal.aborted) {
      cleanupSync();
      process.exit(130);
    }
    run.abort(new Error(`interrupted by ${sig}`));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('exit', () => {
    if (svc.child && svc.exitInfo === null) cleanupSync();
  });

  const report = initialCronReport(o);
  let failed = false;
  try {
    svc.start();
    report.service.pid = svc.child?.pid ?? null;
    report.service.ready_after_ms = round(await svc.waitReady(client), 0);
    await sleep(300); // let the workers report in
    report.service.worker_pids = svc.sampler?.lastWorkerPids ?? [];
    try {
      report.cron = await cronScenario(client, svc, o);
    } catch (err) {
      failed = true;
      const msg = (err as Error).message;
      report.cron = { error: msg };
      report.errors.push(`cron: ${msg}`);
    }
  } catch (err) {
    failed = true;
    report.errors.push((err as Error).message);
  } finally {
    if (svc.sampler) report.resources = svc.sampler.overallPeaks();
    report.machine.loadavg_1m_at_end = Number(os.loadavg()[0].toFixed(2));
    client.close();
    try {
      report.service.shutdown = await svc.stop(10_000);
    } catch (err) {
      report.errors.push(`stop: ${(err as Error).message}`);
    }
    if (failed) process.stderr.write(`[bench-cron] service log tail:\n${svc.logTail(30)}\n`);
    if (o.keepTmp) process.stderr.write(`[bench-cron] temp dir kept: ${tmpDir}\n`);
    else fs.rmSync(tmpDir, { recursive: true, force: true });
    clearTimeout(overall);
    clearTimeout(hard);
  }

  report.ok = !failed;
  report.duration_s = round((Date.now() - startedWall) / 1000, 1);
  writeCronReport(report, o.out, o.history);
  return failed ? 1 : 0;
}
