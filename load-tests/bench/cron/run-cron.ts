/**
 * One bench-cron run from start to end: the flags, then the service on a free port with a temp
 * dir and the cron scenario, always stopping the service and removing the temp dir (run control
 * in ../run-harness.ts, the service skeleton in ../service-run.ts, as for bench-throughput).
 * Returns the exit code (0 ran to the end, 1 failed, 2 usage).
 */
import { loadavg1m } from '../results-file';
import { recordStep, runHarness } from '../run-harness';
import { withService } from '../service-run';
import { CRON_HELP, CronOptions, parseCronOptions } from './cron-options';
import { initialCronReport, writeCronReport } from './cron-report';
import { cronScenario } from './cron-scenario';

/**
 * Runs bench-cron with the process's arguments; writes the report (JSON to stdout, the results
 * file and the history file, table to stderr) unless the flags were bad or `--help`.
 * @returns the exit code: 0 ran to the end, 1 failed, 2 usage
 */
export function mainCron(): Promise<number> {
  return runHarness<CronOptions>({
    name: 'bench-cron',
    help: CRON_HELP,
    parse: parseCronOptions,
    write: (report, o) => writeCronReport(report, o.out, o.history),
    async run(o, guard) {
      const report = initialCronReport(o);
      const spec = {
        tag: '[bench-cron]',
        tmpPrefix: 'sched-bench-cron-',
        settings: o,
        maxSockets: Math.max(16, o.concurrency * 2),
        report,
        guard,
        atEnd: () => {
          report.machine.loadavg_1m_at_end = loadavg1m();
        },
      };
      const failed = await withService(
        spec,
        async ({ svc, client }) => !(await recordStep(report, 'cron', 'cron', report.errors, () => cronScenario(client, svc, o))),
      );
      return { report, failed };
    },
  });
}
