/**
 * One bench-tenants run from start to end: the flags, then each chosen scenario on its own fresh
 * service (temp dir, free port, config file; see scenario-service.ts), always stopping the
 * service and removing its temp dir (run control in ../run-harness.ts, as for bench-throughput).
 * Returns the exit code (0 ran to the end, 1 failed, 2 usage).
 */
import { loadavg1m } from '../results-file';
import { run, sleep } from '../run-control';
import { recordStep, runHarness } from '../run-harness';
import { fairnessScenario } from './fairness';
import { rateLimitScenario } from './rate-limit';
import { ScenarioService } from './scenario-service';
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
export function mainTenants(): Promise<number> {
  return runHarness<TenantsOptions>({
    name: 'bench-tenants',
    help: TENANTS_HELP,
    parse: parseTenantsOptions,
    write: (report, o) => writeTenantsReport(report, o.out, o.history),
    async run(o, guard) {
      const report = initialTenantsReport(o);
      let failed = false;
      for (const name of SCENARIOS) {
        if (!o.scenarios.has(name)) continue;
        if (run.signal.aborted) break;
        process.stderr.write(`[bench-tenants] ${name} ...\n`);
        const ss = await ScenarioService.create(name, o);
        guard.onKill(
          () => ss.killNow(),
          () => ss.svc.child !== null && ss.svc.exitInfo === null,
        );
        let service: Record<string, unknown> = {};
        const ok = await recordStep(report, name, name, report.errors, async () => {
          service = await ss.start();
          return RUNNERS[name](ss, o);
        });
        if (!ok) {
          failed = true;
          process.stderr.write(
            `[bench-tenants] ${name} failed: ${report[name].error}\n[bench-tenants] service log tail:\n${ss.logTail(30)}\n`,
          );
        }
        try {
          Object.assign(service, await ss.stop());
        } catch (err) {
          report.errors.push(`${name}: stop: ${(err as Error).message}`);
        }
        report[name].service = service;
        guard.onKill(() => undefined);
        if (!run.signal.aborted) await sleep(1000).catch(() => undefined); // a quiet gap between services
      }
      report.machine.loadavg_1m_at_end = loadavg1m();
      return { report, failed };
    },
  });
}
