/**
 * One bench run from start to end: parses the flags, starts the service on a free port with a temp
 * dir, runs the chosen scenarios in order, and always stops the service and removes the temp dir
 * (overall timeout, hard failsafe, SIGINT/SIGTERM). Returns the exit code (0 ok, 1 failed, 2 usage).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { HELP, Options, parseOptions } from './cli-options';
import { HttpClient } from './http-client';
import { SERVICE_ENTRY } from './paths';
import { initialReport, writeReport } from './report';
import { checkAborted, run, sleep } from './run-control';
import { pacedScenario } from './scenarios/paced';
import { scheduledScenario } from './scenarios/scheduled';
import { throughputScenario } from './scenarios/throughput';
import { workflowScenario } from './scenarios/workflow';
import { freePort, Service } from './service-process';
import { round } from './stats';

export async function main(): Promise<number> {
  let opts: Options | null;
  try {
    opts = parseOptions(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n\n${HELP}`);
    return 2;
  }
  if (opts === null) {
    process.stdout.write(HELP);
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

  const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sched-bench-'));
  const port = await freePort();
  const svc = new Service(tmpDir, port, o);
  const client = new HttpClient('127.0.0.1', port, Math.max(64, o.concurrency * 2));

  const cleanupSync = () => {
    svc.killNow();
    if (!o.keepTmp) fs.rmSync(tmpDir, { recursive: true, force: true });
  };
  // Last resort if graceful cleanup itself hangs: 10 s SIGTERM grace + margin after the deadline.
  const hard = setTimeout(() => {
    process.stderr.write('bench-throughput: hard timeout, killing the service\n');
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

  const report = initialReport(o);

  let failed = false;
  try {
    svc.start();
    report.service.pid = svc.child?.pid ?? null;
    report.service.ready_after_ms = round(await svc.waitReady(client), 0);
    await sleep(300); // let the workers report in
    report.service.worker_pids = svc.sampler?.lastWorkerPids ?? [];

    const scenarios: Array<[string, (c: HttpClient, s: Service, o: Options) => Promise<Record<string, unknown>>]> = [
      ['throughput', throughputScenario],
      ['paced', pacedScenario],
      ['scheduled', scheduledScenario],
      ['workflow', workflowScenario],
    ];
    for (const [name, fn] of scenarios) {
      if (!o.scenarios.has(name)) continue;
      checkAborted();
      process.stderr.write(`[bench] ${name} ...\n`);
      try {
        report[name] = await fn(client, svc, o);
      } catch (err) {
        failed = true;
        const msg = (err as Error).message;
        report[name] = { error: msg };
        report.errors.push(`${name}: ${msg}`);
        if (run.signal.aborted) break;
      }
      await sleep(500); // a quiet gap between scenarios
    }
  } catch (err) {
    failed = true;
    report.errors.push((err as Error).message);
  } finally {
    if (svc.sampler) report.resources = svc.sampler.overallPeaks();
    client.close();
    try {
      report.service.shutdown = await svc.stop(10_000);
    } catch (err) {
      report.errors.push(`stop: ${(err as Error).message}`);
    }
    if (failed) process.stderr.write(`[bench] service log tail:\n${svc.logTail(30)}\n`);
    if (o.keepTmp) process.stderr.write(`[bench] temp dir kept: ${tmpDir}\n`);
    else fs.rmSync(tmpDir, { recursive: true, force: true });
    clearTimeout(overall);
    clearTimeout(hard);
  }

  report.ok = !failed;
  report.duration_s = round((Date.now() - startedWall) / 1000, 1);
  writeReport(report, o.out);
  return failed ? 1 : 0;
}
