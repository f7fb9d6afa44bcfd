/**
 * bench-throughput's results: the report's opening fields (machine, code, service settings,
 * options), the short table on stderr, and the output (JSON to stdout and to the results file).
 * The shared parts are in results-file.ts.
 */
import type { Options } from './cli-options';
import { gitInfo, machineInfo, readServiceDefaults, serviceInfo, Table, writeResults } from './results-file';

/** The short human-readable table (stderr). */
export function humanTable(r: Record<string, any>): string {
  const table = new Table(44);
  const { lines, row } = table;
  lines.push(
    `bench-throughput  (${r.machine.cpus} cpus, node ${r.machine.node}, workers=${r.service.workers}, worker_concurrency=${r.service.worker_concurrency})`,
  );
  const t = r.throughput;
  if (t?.submit) {
    lines.push(`throughput (${t.tasks} noop, batches of ${t.batch_size}, ${t.concurrency} in flight)`);
    row('submit rate (tasks/s acknowledged)', t.submit.tasks_per_s);
    row('end-to-end rate (tasks/s, all SUCCEEDED)', t.end_to_end.tasks_per_s);
    row('end-to-end time (s)', t.end_to_end.seconds);
    row(
      'dispatch lag p50 / p99 / max (ms)',
      `${t.dispatch_lag.p50_ms} / ${t.dispatch_lag.p99_ms} / ${t.dispatch_lag.max_ms}  (n=${t.dispatch_lag.count})`,
    );
    row('peak RSS main / total (MB)', `${t.resources.main_peak_rss_mb} / ${t.resources.total_peak_rss_mb}`);
    row('CPU s main / workers / harness', `${t.resources.main_cpu_s} / ${t.resources.workers_cpu_s} / ${t.resources.harness_cpu_s}`);
  } else if (t?.error) lines.push(`throughput: FAILED ${t.error}`);
  const p = r.paced;
  if (p?.dispatch_lag) {
    lines.push(`paced (${p.target_rate_per_s}/s for ${p.seconds} s, single submissions)`);
    row('acknowledged / achieved send rate', `${p.acknowledged} / ${p.achieved_send_rate_per_s}/s`);
    row('ack latency p50 / p99 (ms)', `${p.ack_latency.p50_ms} / ${p.ack_latency.p99_ms}`);
    row(
      'dispatch lag p50 / p99 / max (ms)',
      `${p.dispatch_lag.p50_ms} / ${p.dispatch_lag.p99_ms} / ${p.dispatch_lag.max_ms}  (n=${p.dispatch_lag.count})`,
    );
    row('target p99 <= 50 ms', p.target.met ? 'met' : 'NOT met');
  } else if (p?.error) lines.push(`paced: FAILED ${p.error}`);
  const s = r.scheduled;
  if (s?.lateness) {
    lines.push(`scheduled (${s.tasks} tasks at now + ${s.delay_ms} ms)`);
    row('lateness p50 / p99 / max (ms)', `${s.lateness.p50_ms} / ${s.lateness.p99_ms} / ${s.lateness.max_ms}`);
    row('started early', s.started_early);
  } else if (s?.error) lines.push(`scheduled: FAILED ${s.error}`);
  const w = r.workflow;
  if (w?.end_to_end_s !== undefined) {
    lines.push(`workflow (${w.tasks} noop in ${w.layers} layers of ${w.width}, ${w.edges} edges)`);
    row('status / submit ack (ms)', `${w.status} / ${w.submit_ack_ms}`);
    row('end-to-end (s) DAG / same tasks without edges', `${w.end_to_end_s} / ${w.flat_baseline.end_to_end_s}`);
    row('per-edge overhead (ms)', w.per_edge_overhead_ms);
    row('release-to-start p50 / p99 (ms)', `${w.release_to_start.p50_ms} / ${w.release_to_start.p99_ms}`);
  } else if (w?.error) lines.push(`workflow: FAILED ${w.error}`);
  if (r.resources) row('overall peak RSS main / total (MB)', `${r.resources.main_peak_rss_mb} / ${r.resources.total_peak_rss_mb}`);
  return table.text(r);
}

/** The report before the run: machine, git, service settings and options (key order is the JSON's). */
export function initialReport(o: Options): Record<string, any> {
  const defaults = readServiceDefaults();
  const report: Record<string, any> = {
    generated_at: new Date().toISOString(),
    ok: false,
    machine: machineInfo(),
    git: gitInfo(),
    service: {
      ...serviceInfo(o, 'sqlite (temp file)', defaults),
      log_level: o.logLevel,
      cpu_prof_dir: o.cpuProfDir,
    },
    options: {
      tasks: o.tasks,
      batch_size: o.batchSize,
      concurrency: o.concurrency,
      lag_sample: o.lagSample,
      paced_seconds: o.pacedSeconds,
      rate: o.rate,
      paced_lag_sample: o.pacedLagSample,
      scheduled_count: o.scheduledCount,
      scheduled_delay_ms: o.scheduledDelayMs,
      scenarios: [...o.scenarios],
      ...(o.scenarios.has('workflow') ? { dag_layers: o.dagLayers, dag_width: o.dagWidth, dag_fan_in: o.dagFanIn } : {}),
      poll_ms: o.pollMs,
      timeout_s: o.timeoutS,
    },
    errors: [] as string[],
  };
  return report;
}

/** Writes the JSON to `out` and stdout, and the short table to stderr. */
export function writeReport(report: Record<string, any>, out: string): void {
  writeResults(report, { out, tag: '[bench]', table: humanTable(report) });
}
