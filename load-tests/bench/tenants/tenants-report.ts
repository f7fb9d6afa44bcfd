/**
 * bench-tenants' results: the report's opening fields (machine, code, service settings, options),
 * the short table on stderr, and the output (JSON to stdout, to `--out`, and appended as one line
 * to load-tests/results/tenants-runs.jsonl so that runs accumulate). The shared parts are in
 * ../results-file.ts.
 */
import { gitInfo, loadavg1m, machineInfo, readServiceDefaults, serviceInfo, Table, writeResults } from '../results-file';
import type { TenantsOptions } from './tenants-options';

/** The report before the run (key order is the JSON's). */
export function initialTenantsReport(o: TenantsOptions): Record<string, any> {
  const d = readServiceDefaults();
  return {
    bench: 'tenants',
    generated_at: new Date().toISOString(),
    ok: false,
    machine: { ...machineInfo(), loadavg_1m_at_start: loadavg1m() },
    git: gitInfo(),
    service: {
      ...serviceInfo(o, 'sqlite (temp file, one per scenario)', d),
      log_level: o.logLevel,
    },
    options: {
      scenarios: [...o.scenarios],
      a_tasks: o.aTasks,
      a_mode: o.aMode,
      a_due_lead_s: o.aDueLeadS,
      b_interval_ms: o.bIntervalMs,
      baseline_seconds: o.baselineSeconds,
      batch_size: o.batchSize,
      concurrency: o.concurrency,
      rl_tasks: o.rlTasks,
      rl_rate: o.rlRate,
      rl_burst: o.rlBurst,
      rl_noop_tasks: o.rlNoopTasks,
      weight_tasks: o.weightTasks,
      weight_c: o.weightC,
      poll_ms: o.pollMs,
      timeout_s: o.timeoutS,
    },
    errors: [] as string[],
  };
}

const dist = (x: any) => (x ? `${x.p50_ms} / ${x.p99_ms} / ${x.max_ms}  (n=${x.count})` : '-');

/** The table rows of the fairness scenario's due_at_once mode. */
function burstRows(b: any, w: any, intervalMs: number, { lines, row }: Table): void {
  const ack = (x: any) => `${x.p50_ms} / ${x.p99_ms} / ${x.max_ms}  (n=${x.count})`;
  lines.push(`fairness (A: ${w.a.tasks} noop due at one second, ${w.a.due_lead_s} s ahead; B: one noop every ${intervalMs} ms)`);
  if (b)
    row(
      'B alone: lag / ack p50/p99/max (ms)',
      `${dist(b.b.dispatch_lag)}; ack ${ack(b.b.submissions.ack_latency)}  load ${b.load_at_start}`,
    );
  row('B while A submits: lag p50/p99/max', dist(w.b.dispatch_lag.a_submitting));
  row('B while A submits: ack p50/p99/max', ack(w.b.submission_ack.a_submitting));
  row('B during the drain: lag p50/p99/max', `${dist(w.b.dispatch_lag.drain)}  load ${w.load_at_start}`);
  row('B during the drain: ack p50/p99/max', ack(w.b.submission_ack.drain));
  row('event-loop max per scrape: drain p50/p99/max', dist(w.service_event_loop_max_per_scrape.drain));
  row(
    `B p99 lag / ack <= ${w.target.b_lag_p99_ms} ms`,
    `${w.target.lag_met ? 'met' : 'NOT met'} / ${w.target.ack_met ? 'met' : 'NOT met'}`,
  );
  row('A submit (s) / last ack before due (s)', `${w.a.submit.seconds} / ${w.a.last_ack_before_due_s}`);
  row('A drain after due / all started (s)', `${w.a.drain_s} / ${w.a.all_started_after_due_s}  (${w.a.drain_tasks_per_s} tasks/s)`);
}

/** The short human-readable table (stderr). */
export function tenantsTable(r: Record<string, any>): string {
  const table = new Table(46);
  const { lines, row } = table;
  lines.push(
    `bench-tenants  (${r.machine.cpus} cpus, node ${r.machine.node}, workers=${r.service.workers}, load ${r.machine.loadavg_1m_at_start} at start)`,
  );
  const f = r.fairness;
  if (f?.with_a_backlog) {
    const w = f.with_a_backlog;
    const b = f.baseline_b_alone;
    lines.push(`fairness (A: ${w.a.tasks} noop in batches; B: one noop every ${r.options.b_interval_ms} ms)`);
    if (b) row('B alone: lag p50 / p99 / max (ms)', `${dist(b.b.dispatch_lag)}  load ${b.load_at_start}`);
    row('B with A: lag p50 / p99 / max (ms)', `${dist(w.b.dispatch_lag)}  load ${w.load_at_start}`);
    row('  while A was submitting', dist(w.b.dispatch_lag.while_a_submitting));
    row("  after A's last ack", dist(w.b.dispatch_lag.after_a_last_ack));
    if (b) row('B alone: start - send p50 / p99 / max (ms)', dist(b.b.start_after_send));
    row('B with A: start - send p50 / p99 / max (ms)', dist(w.b.start_after_send));
    row('B with A: submission ack p50 / p99 (ms)', `${w.b.submissions.ack_latency.p50_ms} / ${w.b.submissions.ack_latency.p99_ms}`);
    row(
      'service event-loop max per scrape p50/p99/max',
      `alone ${b ? dist(b.service_event_loop_max_per_scrape) : '-'}; with A ${dist(w.service_event_loop_max_per_scrape)}`,
    );
    row(`B p99 <= ${w.target.b_p99_ms} ms`, w.target.met ? 'met' : 'NOT met');
    row('A submit / drain / all started (s)', `${w.a.submit.seconds} / ${w.a.drain_s} / ${w.a.all_started_s}`);
    row('A drain rate (tasks/s)', w.a.drain_tasks_per_s);
    row('A lag sample p50 / p99 / max (ms)', dist(w.a.dispatch_lag_sample));
  } else if (f?.with_a_burst) burstRows(f.baseline_b_alone, f.with_a_burst, r.options.b_interval_ms, table);
  else if (f?.error) lines.push(`fairness: FAILED ${f.error}`);
  const l = r.rate_limit;
  if (l?.send_email) {
    const e = l.send_email;
    lines.push(
      `rate_limit (send_email ${r.options.rl_rate}/s burst ${r.options.rl_burst}; ${e.tasks} send_email + ${l.noop_alongside.tasks} noop at once)`,
    );
    row(
      'max starts in any 1 s window',
      `${e.max_starts_in_any_1s_window} (allowed ${e.allowed_in_any_1s_window}: ${e.target.met ? 'met' : 'NOT met'})`,
    );
    row('first -> last start (s) / expected', `${e.first_to_last_start_s} / ${e.expected_first_to_last_s}`);
    row('mean rate (starts/s)', e.mean_rate_per_s);
    row('noop drain alone / alongside (s)', `${l.noop_alone?.drain_s} / ${l.noop_alongside.drain_s}  load ${l.load_at_start}`);
    row('  after their last ack (s)', `${l.noop_alone?.drain_after_last_ack_s} / ${l.noop_alongside.drain_after_last_ack_s}`);
    row('  submission alone / alongside (s)', `${l.noop_alone?.submit?.seconds} / ${l.noop_alongside.submit.seconds}`);
  } else if (l?.error) lines.push(`rate_limit: FAILED ${l.error}`);
  const g = r.weights;
  if (g?.both_busy) {
    lines.push(`weights (C weight ${g.weights.C}, D weight 1, ${g.tasks_per_tenant} noop each)`);
    row(
      'C : D starts while both had work',
      `${g.both_busy.c_starts} : ${g.both_busy.d_starts} = ${g.both_busy.ratio_c_to_d} (expected ${g.both_busy.expected_ratio})`,
    );
    row('same from /metrics counters', g.metrics_cross_check.ratio);
    row('both-busy interval (s) / all terminal (s)', `${g.both_busy.seconds} / ${g.all_terminal_s}  load ${g.load_at_start}`);
  } else if (g?.error) lines.push(`weights: FAILED ${g.error}`);
  return table.text(r);
}

/** Writes the JSON to `out`, appends it to `history` (one line) and stdout; the table to stderr. */
export function writeTenantsReport(report: Record<string, any>, out: string, history: string): void {
  writeResults(report, { out, history, tag: '[bench-tenants]', table: tenantsTable(report) });
}
