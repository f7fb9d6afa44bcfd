/**
 * One bench-throughput run from start to end: the flags, then the service on a free port with a
 * temp dir and the chosen scenarios in order, always stopping the service and removing the temp
 * dir (run control in run-harness.ts, the service skeleton in service-run.ts). Returns the exit
 * code (0 ok, 1 failed, 2 usage).
 */
import { HELP, Options, parseOptions } from './cli-options';
import type { HttpClient } from './http-client';
import { initialReport, writeReport } from './report';
import { checkAborted, run, sleep } from './run-control';
import { recordStep, runHarness } from './run-harness';
import { pacedScenario } from './scenarios/paced';
import { scheduledScenario } from './scenarios/scheduled';
import { throughputScenario } from './scenarios/throughput';
import { workflowScenario } from './scenarios/workflow';
import type { Service } from './service-process';
import { withService } from './service-run';

const SCENARIOS: Array<[string, (c: HttpClient, s: Service, o: Options) => Promise<Record<string, unknown>>]> = [
  ['throughput', throughputScenario],
  ['paced', pacedScenario],
  ['scheduled', scheduledScenario],
  ['workflow', workflowScenario],
];

/**
 * Runs bench-throughput with the process's arguments; writes the report (JSON to stdout and the
 * results file, table to stderr) unless the flags were bad or `--help`.
 * @returns the exit code: 0 every scenario ran to the end, 1 one failed, 2 usage
 */
export function main(): Promise<number> {
  return runHarness<Options>({
    name: 'bench-throughput',
    help: HELP,
    parse: parseOptions,
    write: (report, o) => writeReport(report, o.out),
    async run(o, guard) {
      const report = initialReport(o);
      const spec = { tag: '[bench]', tmpPrefix: 'sched-bench-', settings: o, maxSockets: Math.max(64, o.concurrency * 2), report, guard };
      const failed = await withService(spec, async ({ svc, client }) => {
        let bad = false;
        for (const [name, fn] of SCENARIOS) {
          if (!o.scenarios.has(name)) continue;
          checkAborted();
          process.stderr.write(`[bench] ${name} ...\n`);
          if (!(await recordStep(report, name, name, report.errors, () => fn(client, svc, o)))) {
            bad = true;
            if (run.signal.aborted) break;
          }
          await sleep(500); // a quiet gap between scenarios
        }
        return bad;
      });
      return { report, failed };
    },
  });
}
