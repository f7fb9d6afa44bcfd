/**
 * One bench-wait run from start to end: the flags, the service on a free port with a temp dir,
 * the scenario, the report (run control in ../run-harness.ts, the service skeleton in
 * ../service-run.ts, as for bench-cron). Returns the exit code (0 ran to the end, 1 failed, 2 usage).
 */
import { gitInfo, loadavg1m, machineInfo, readServiceDefaults, serviceInfo, Table, writeResults } from '../results-file';
import { recordStep, runHarness } from '../run-harness';
import { withService } from '../service-run';
import { parseWaitOptions, WAIT_HELP, WaitOptions } from './wait-options';
import { waitScenario } from './wait-scenario';

function initialReport(o: WaitOptions): Record<string, any> {
  const d = readServiceDefaults();
  return {
    bench: 'wait',
    generated_at: new Date().toISOString(),
    ok: false,
    machine: { ...machineInfo(), loadavg_1m_at_start: loadavg1m() },
    git: gitInfo(),
    service: { ...serviceInfo(o, 'sqlite (temp file)', d), waits: d.waits ?? null, log_level: o.logLevel },
    options: { tasks: o.tasks, lead_ms: o.leadMs, spread_ms: o.spreadMs, wait_s: o.waitS, timeouts: o.timeouts, timeout_s: o.timeoutS },
    errors: [] as string[],
  };
}

function table(r: Record<string, any>): string {
  const t = new Table(44);
  const w = r.wait;
  t.lines.push(`bench-wait  (${r.machine.cpus} cpus, node ${r.machine.node}, load ${r.machine.loadavg_1m_at_start} at start)`);
  if (w && !w.error) {
    const d = w.delay_after_end;
    t.row('waits measured / ended before the wait', `${w.waits_measured} / ${w.ended_before_wait_sent}`);
    t.row('answer after the end p50 / p99 / max (ms)', `${d.p50_ms} / ${d.p99_ms} / ${d.max_ms}`);
    t.row(`goal p99 ≤ ${w.goal_p99_ms} ms`, w.goal_met ? 'met' : 'NOT met');
    const l = w.timeout_lateness;
    t.row('timeouts: lateness p50 / max (ms)', `${l.p50_ms} / ${l.max_ms}  (n=${l.count})`);
  }
  return t.text(r);
}

/**
 * Runs bench-wait with the process's arguments; writes the report (JSON to stdout, the results
 * file and the history file, table to stderr) unless the flags were bad or `--help`.
 */
export function mainWait(): Promise<number> {
  return runHarness<WaitOptions>({
    name: 'bench-wait',
    help: WAIT_HELP,
    parse: parseWaitOptions,
    write: (report, o) => writeResults(report, { out: o.out, history: o.history, tag: '[bench-wait]', table: table(report) }),
    async run(o, guard) {
      const report = initialReport(o);
      const failed = await withService(
        {
          tag: '[bench-wait]',
          tmpPrefix: 'sched-bench-wait-',
          settings: o,
          maxSockets: o.tasks + o.timeouts + 16,
          report,
          guard,
          atEnd: () => {
            report.machine.loadavg_1m_at_end = loadavg1m();
          },
        },
        async ({ client }) => !(await recordStep(report, 'wait', 'wait', report.errors, () => waitScenario(client, o))),
      );
      return { report, failed };
    },
  });
}
