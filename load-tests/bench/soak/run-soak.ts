/**
 * One bench-soak run from the flags to the report: the service started (soak-service.ts), the
 * soak (soak-scenario.ts), the service stopped and its temp dir removed in all cases (run control
 * in ../run-harness.ts), the report written (JSON to stdout, --out and soak-runs.jsonl; a table
 * on stderr). The exit code is 0 when the run went to the end whatever the verdict, 1 on a
 * harness error, 2 on bad flags.
 */
import { gitInfo, loadavgs, machineInfo, readServiceDefaults, serviceInfo, Table, writeResults } from '../results-file';
import { recordStep, runHarness } from '../run-harness';
import { soakScenario } from './soak-scenario';
import { parseSoakOptions, SOAK_HELP, SoakOptions } from './soak-options';
import { SoakService } from './soak-service';

const MIN = 60_000;

/** The short human-readable table (stderr). */
export function soakTable(r: Record<string, any>): string {
  const t = new Table(40);
  const { lines, row } = t;
  const s = r.soak ?? {};
  lines.push(
    `bench-soak  (${r.machine.cpus} cpus, node ${r.machine.node}, workers=${r.service.workers}, load ${r.machine.loadavg_at_start.join(' ')} at start, ${r.machine.loadavg_at_end?.join(' ') ?? '-'} at end)`,
  );
  if (s.peak) row('peak burst (tasks/s)', `${s.peak.tasks_per_s}  (${s.peak.tasks} tasks)`);
  const st = s.load?.steady;
  row(
    'steady rate (tasks/s)',
    `${s.rate_per_s}  achieved ${st?.achieved_per_s ?? '-'}, batch ack p99 ${st?.batch_ack_latency?.p99_ms ?? '-'} ms`,
  );
  if (st && !st.kept_up)
    lines.push('  WARNING: the service fell behind the steady rate: an overloaded run; its lag figures measure the backlog');
  for (const f of s.floods ?? []) row(`flood at ${f.at_min} min`, `${f.acked} tasks, drained in ${f.drain_s} s`);
  const v = s.verdict;
  if (v) {
    lines.push(
      `windows (min)       ${'main MB'.padStart(9)} ${'wrk MB'.padStart(8)} ${'WAL MB'.padStart(8)} ${'p99 ms'.padStart(8)} ${'p99+fl'.padStart(8)} ${'p99 snd'.padStart(8)} ${'loop ms'.padStart(8)} ${'heap MB'.padStart(8)} ${'db MB'.padStart(8)}`,
    );
    for (const w of v.windows) {
      const c = (x: unknown) => String(x ?? '-').padStart(8);
      lines.push(
        `  ${`${w.from_min}–${w.to_min}`.padEnd(17)} ${String(w.main_rss_mb ?? '-').padStart(9)} ${c(w.workers_rss_mb)} ${c(w.wal_mb)} ${c(w.steady_p99_lag_ms)} ${c(w.steady_p99_lag_with_floods_ms)} ${c(w.steady_p99_start_after_send_ms)} ${c(w.event_loop_max_ms)} ${c(w.main_heap_used_mb)} ${c(w.db_mb_at_end)}`,
      );
    }
    for (const [k, f] of Object.entries(v.figures as Record<string, any>))
      row(
        `${k}: ref → last`,
        `${f.reference} → ${f.last}  (${f.change_pct} %)  ${f.within ? 'within' : 'OUT'}; every window ${f.every_window_within ? 'within' : 'not'}`,
      );
  }
  const cpl = s.completeness;
  if (cpl) {
    row('acknowledged by kind', JSON.stringify(cpl.acknowledged_by_kind));
    row(
      'missing / duplicated side effects',
      `${JSON.stringify(cpl.effects.missing)} / ${cpl.effects.duplicated}  (cron missing ${cpl.effects.cron_missing})`,
    );
    row('unexpected ends', cpl.unexpected.length ? cpl.unexpected.join('; ') : 'none');
  }
  row('VERDICT', s.pass === undefined ? '-' : s.pass ? 'PASS' : 'FAIL');
  return t.text(r);
}

/**
 * Runs bench-soak with the process's arguments.
 * @returns the exit code: 0 ran to the end (whatever the verdict), 1 harness error, 2 usage
 */
export function mainSoak(): Promise<number> {
  return runHarness<SoakOptions>({
    name: 'bench-soak',
    help: SOAK_HELP,
    parse: parseSoakOptions,
    write: (report, o) => writeResults(report, { out: o.out, history: o.history, tag: '[bench-soak]', table: soakTable(report) }),
    async run(o, guard) {
      const report: Record<string, any> = {
        bench: 'soak',
        generated_at: new Date().toISOString(),
        ok: false,
        machine: { ...machineInfo(), loadavg_at_start: loadavgs() },
        git: gitInfo(),
        service: { ...serviceInfo(o, 'sqlite (temp file)', readServiceDefaults()), log_level: o.logLevel },
        options: {
          duration_min: o.durationMs / MIN,
          warmup_min: o.warmupMs / MIN,
          window_min: o.windowMs / MIN,
          sample_interval_s: o.sampleIntervalMs / 1000,
          rate: o.rate,
          peak_tasks: o.peakTasks,
          batch_ms: o.batchMs,
          retry_fraction: o.retryFraction,
          flood_every_min: o.floodEveryMs / MIN,
          flood_tasks: o.floodTasks,
          crons: o.crons,
          cron_every_s: o.cronEveryS,
          workflow_every_s: o.workflowEveryMs / 1000,
          workflow_tasks: o.workflowLayers * o.workflowWidth,
          lag_sample: o.lagSample,
          tolerance: o.tolerance,
          timeout_s: o.timeoutS,
        },
        errors: [] as string[],
      };
      const ss = await SoakService.create(o);
      guard.onKill(
        () => ss.killNow(),
        () => ss.svc.child !== null && ss.svc.exitInfo === null,
      );
      let service: Record<string, unknown> = {};
      const ok = await recordStep(report, 'soak', 'soak', report.errors, async () => {
        service = await ss.start();
        return soakScenario(ss, o);
      });
      if (!ok) process.stderr.write(`[bench-soak] failed: ${report.soak.error}\n[bench-soak] service log tail:\n${ss.svc.logTail(30)}\n`);
      try {
        Object.assign(service, await ss.stop());
      } catch (err) {
        report.errors.push(`stop: ${(err as Error).message}`);
      }
      report.service.run = service;
      report.machine.loadavg_at_end = loadavgs();
      return { report, failed: !ok };
    },
  });
}
