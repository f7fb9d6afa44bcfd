/**
 * bench-cron's results: the report's opening fields (machine, code, service settings, options),
 * the short table on stderr, and the output (JSON to stdout, to `--out`, and appended as one line
 * to load-tests/results/cron-runs.jsonl so that runs accumulate). The shared parts are in
 * ../results-file.ts.
 */
import { gitInfo, loadavg1m, machineInfo, readServiceDefaults, serviceInfo, Table, writeResults } from '../results-file';
import type { CronOptions } from './cron-options';

/** The report before the run (key order is the JSON's). */
export function initialCronReport(o: CronOptions): Record<string, any> {
  const d = readServiceDefaults();
  return {
    bench: 'cron',
    generated_at: new Date().toISOString(),
    ok: false,
    machine: { ...machineInfo(), loadavg_1m_at_start: loadavg1m() },
    git: gitInfo(),
    service: {
      ...serviceInfo(o, 'sqlite (temp file)', d),
      cron_horizon_ms: d.cronHorizonMs ?? null,
      cron_window_max: d.cronWindowMax ?? null,
      cron_misfire_grace_ms: d.cronMisfireGraceMs ?? null,
      log_level: o.logLevel,
      cpu_prof_dir: o.cpuProfDir,
    },
    options: {
      crons: o.crons,
      seconds: o.seconds,
      every_minute: o.everyMinute,
      settle_ms: o.settleMs,
      lag_sample: o.lagSample,
      concurrency: o.concurrency,
      timeout_s: o.timeoutS,
    },
    errors: [] as string[],
  };
}

/** The short human-readable table (stderr). */
export function cronTable(r: Record<string, any>): string {
  const table = new Table(44);
  const { lines, row } = table;
  const c = r.cron;
  lines.push(
    `bench-cron  (${r.machine.cpus} cpus, node ${r.machine.node}, load ${r.machine.loadavg_1m_at_start} at start, workers=${r.service.workers})`,
  );
  if (c?.exactness) {
    const e = c.exactness;
    const fl = c.fire_lag;
    const sl = c.start_lag;
    const cpu = c.firing_phase.cpu_pct_of_one_core;
    lines.push(`${c.crons} crons "${c.cron_expression}", window ${e.window.first_fire_time_max} .. ${e.window.end}`);
    row('create rate (crons/s)', c.create.crons_per_s);
    row('fire lag p50 / p99 / max (ms)', `${fl.p50_ms} / ${fl.p99_ms} / ${fl.max_ms}  (n=${fl.count})`);
    const steady = c.fire_lag_steady;
    row('  after the last create', `${steady.p50_ms} / ${steady.p99_ms} / ${steady.max_ms}  (n=${steady.count})`);
    row('start lag p50 / p99 / max (ms)', `${sl.p50_ms} / ${sl.p99_ms} / ${sl.max_ms}  (n=${sl.count})`);
    row('  after the last create', `${sl.steady.p50_ms} / ${sl.steady.p99_ms} / ${sl.steady.max_ms}  (n=${sl.steady.count})`);
    row('fire records expected / in window', `${e.expected_fire_records} / ${e.fire_records_in_window}`);
    row('missing / duplicate / off-grid fire times', `${e.missing_fire_times} / ${e.duplicate_fire_times} / ${e.off_grid_fire_times}`);
    row('crons exact', `${e.crons_exact} of ${c.crons}`);
    row('outcomes created / skipped / caught_up', `${e.outcomes.created} / ${e.outcomes.skipped} / ${e.outcomes.caught_up}`);
    row('service CPU while firing (% of one core)', `${cpu.service_total} (main ${cpu.main}, workers ${cpu.workers})`);
    row(
      'peak RSS main / total while firing (MB)',
      `${c.firing_phase.resources.main_peak_rss_mb} / ${c.firing_phase.resources.total_peak_rss_mb}`,
    );
  } else if (c?.error) lines.push(`cron: FAILED ${c.error}`);
  if (r.resources) row('overall peak RSS main / total (MB)', `${r.resources.main_peak_rss_mb} / ${r.resources.total_peak_rss_mb}`);
  return table.text(r);
}

/** Writes the JSON to `out`, appends it to `history` (one line) and stdout; the table to stderr. */
export function writeCronReport(report: Record<string, any>, out: string, history: string): void {
  writeResults(report, { out, history, tag: '[bench-cron]', table: cronTable(report) });
}
