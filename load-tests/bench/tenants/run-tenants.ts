/**
 * One bench-tenants run from start to end: parses the flags, runs each chosen scenario on its own
 * fresh service (temp dir, free port, config file; see scenario-service.ts), and always stops the
 * service and removes its temp dir (overall timeout, hard failsafe, SIGINT/SIGTERM), as run.ts
 * does for bench-throughput. Returns the exit code (0 ran to the end, 1 failed, 2 usage).
 */
import fs from 'node:fs';
import { SERVICE_ENTRY } from '../paths';
import { run, sleep } from '../run-control';
import { round } from '../stats';
import { fairnessScenario } from './fairness';
import { rateLimitScenario } from './rate-limit';
import { loadavg1m, ScenarioService } from './scenario-service';
import { parseTenantsOptions, ScenarioName, SCENARIOS, TENANTS_HELP, TenantsOptions } from './tenants-options';
import { initialTenantsReport, writeTenantsReport } from './tenants-report';
import { weightsScenario } from './weights';

const RUNNERS: Record<ScenarioName, (ss: ScenarioService, o: TenantsOptions) => Promise<Record<string, unknown>>> = {
  fairness: fairnessScenario,
  rate_limit: rateLimitScenario,
  weights: weightsScenario,
};

/**
 * Runs bench-tenants with the process's arguments; writes the report (JSON to stdout and the
 * results files, table to stderr) unless the flags were bad or `--help`.
 * @returns the exit code: 0 ran to the end, 1 a scenario failed, 2 usage
 */
export async function mainTenants(): Promise<number> {
  let opts: TenantsOptions | null;
  try {
    opts = parseTenantsOptions(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n\n${TENANTS_HELP}`);
    return 2;
  }
  if (opts === null) {
    process.stdout.write(TENANTS_HELP);
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

  const current: { ss: ScenarioService | null } = { ss: null };
  const cleanupSync = () => current.ss?.killNow();
  const hard = setTimeout(() => {
    process.stderr.write('bench-tenants: hard timeout, killing the service\n');
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
    if (current.ss?.svc.child && current.ss.svc.exitInfo === null) cleanupSync();
  });

  const report = initialTenantsReport(o);
  let failed = false;
  for (const name of SCENARIOS) {
    if (!o.scenarios.has(name)) continue;
    if (run.signal.aborted) break;
    process.stderr.write(`[bench-tenants] ${name} ...\n`);
    const ss = await ScenarioService.create(name, o);
    current.ss = ss;
    let service: Record<string, unknown> = {};
    try {
      service = await ss.start();
      report[name] = await RUNNERS[name](ss, o);
    } catch (err) {
      failed = true;
      const msg = (err as Error).message;
      report[name] = { error: msg };
      report.errors.push(`${name}: ${msg}`);
      process.stderr.write(`[bench-tenants] ${name} failed: ${msg}\n[bench-tenants] service log tail:\n${ss.logTail(30)}\n`);
    } finally {
      try {
        Object.assign(service, await ss.stop());
      } catch (err) {
        report.errors.push(`${name}: stop: ${(err as Error).message}`);
      }
      report[name].service = service;
      current.ss = null;
    }
    if (!run.signal.aborted) await sleep(1000).catch(() => undefined); // a quiet gap between services
  }
  clearTimeout(overall);
  clearTimeout(hard);

  report.machine.loadavg_1m_at_end = loadavg1m();
  report.ok = !failed;
  report.duration_s = round((Date.now() - startedWall) / 1000, 1);
  writeTenantsReport(report, o.out, o.history);
  return failed ? 1 : 0;
}
