/**
 * `npm run bench`: quick versions of every benchmark, one after the other, each in its own
 * process (so one failing does not stop the others, and each starts and stops its own service):
 *
 *   throughput  bench-throughput --tasks 20000 --paced-seconds 5 (paced 1,000/s, 200 scheduled)
 *   cron        bench-cron --crons 300 --seconds 8
 *   peers       bench-peers --quick (5,000 tasks; Agenda 300; herd 500; BullMQ concurrency 50)
 *   scale       bench-scale --stored 500000 --tasks 20000 (the full run stores 10 million)
 *
 * Writes load-tests/results/latest.json: `figures` (the headline numbers, flat) and `runs` (each
 * benchmark's full JSON), and prints a short table of the figures to stdout; each benchmark's own
 * table and progress go to stderr. `--only throughput,cron,peers,scale` picks some; arguments after
 * `--` go to every benchmark (e.g. `-- --timeout 600`). Exit code 1 when one failed. About 2–3 min.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RESULTS_DIR } from './bench/paths';
import { gitInfo, loadavgs } from './bench/results-file';
import { exitWith } from './bench/run-harness';
import { round } from './bench/stats';
import { headline } from './peers/peer-report';

interface Step {
  name: string;
  entry: string;
  args: string[];
}

const STEPS: Step[] = [
  { name: 'throughput', entry: 'bench-throughput.js', args: ['--tasks', '20000', '--paced-seconds', '5', '--log-level', 'warn'] },
  { name: 'cron', entry: 'bench-cron.js', args: ['--crons', '300', '--seconds', '8', '--log-level', 'warn'] },
  { name: 'peers', entry: 'bench-peers.js', args: ['--quick'] },
  { name: 'scale', entry: 'bench-scale.js', args: ['--stored', '500000', '--tasks', '20000', '--log-level', 'warn'] },
];

/** Runs one benchmark with `--out FILE`; its stdout (the same JSON) is dropped, its stderr passed on. */
function runStep(step: Step, out: string, extra: string[]): Promise<{ code: number; seconds: number }> {
  const t0 = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(__dirname, step.entry), ...step.args, '--out', out, ...extra], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const forward = (sig: NodeJS.Signals) => child.kill(sig);
    process.on('SIGINT', forward);
    process.on('SIGTERM', forward);
    child.on('exit', (code, signal) => {
      process.off('SIGINT', forward);
      process.off('SIGTERM', forward);
      resolve({ code: code ?? (signal ? 1 : 0), seconds: round((Date.now() - t0) / 1000, 1) as number });
    });
  });
}

/** The headline figures of each benchmark's JSON, flat (name → value). */
export function figures(runs: Record<string, any>): Record<string, unknown> {
  const f: Record<string, unknown> = {};
  const t = runs.throughput;
  if (t?.throughput?.submit) {
    f['throughput.tasks'] = t.throughput.tasks;
    f['throughput.submit_tasks_per_s'] = t.throughput.submit.tasks_per_s;
    f['throughput.end_to_end_tasks_per_s'] = t.throughput.end_to_end.tasks_per_s;
    f['throughput.dispatch_lag_p99_ms'] = t.throughput.dispatch_lag.p99_ms;
    f['throughput.main_peak_rss_mb'] = t.throughput.resources.main_peak_rss_mb;
  }
  if (t?.paced?.dispatch_lag) {
    f['paced.rate_per_s'] = t.paced.target_rate_per_s;
    f['paced.dispatch_lag_p50_ms'] = t.paced.dispatch_lag.p50_ms;
    f['paced.dispatch_lag_p99_ms'] = t.paced.dispatch_lag.p99_ms;
  }
  if (t?.scheduled?.lateness) {
    f['scheduled.tasks'] = t.scheduled.tasks;
    f['scheduled.lateness_p99_ms'] = t.scheduled.lateness.p99_ms;
    f['scheduled.started_early'] = t.scheduled.started_early;
  }
  const c = runs.cron?.cron;
  if (c?.exactness) {
    f['cron.crons'] = c.crons;
    f['cron.create_per_s'] = c.create.crons_per_s;
    f['cron.fire_lag_p99_ms'] = c.fire_lag.p99_ms;
    f['cron.start_lag_p99_ms'] = c.start_lag.p99_ms;
    f['cron.missing_duplicate_offgrid'] =
      `${c.exactness.missing_fire_times}/${c.exactness.duplicate_fire_times}/${c.exactness.off_grid_fire_times}`;
  }
  const p = runs.peers;
  for (const [name, sys] of Object.entries((p?.systems ?? {}) as Record<string, Record<string, any>>)) {
    const h = headline(sys);
    f[`peers.${name}.tasks`] = h.tasks;
    f[`peers.${name}.enqueue_per_s`] = h.enqueue_per_s;
    f[`peers.${name}.backlog_per_s`] = h.backlog_processing_per_s;
    f[`peers.${name}.end_to_end_per_s`] = h.end_to_end_per_s;
    f[`peers.${name}.herd_p50_p99_max_ms`] =
      `${h.herd_p50_ms}/${h.herd_p99_ms}/${h.herd_max_ms} (n=${h.herd_tasks}, early ${h.herd_started_early})`;
  }
  for (const [pair, r] of Object.entries((p?.ratios ?? {}) as Record<string, Record<string, number | null>>)) {
    f[`peers.${pair}.end_to_end_ratio`] = r.end_to_end_per_s;
    f[`peers.${pair}.backlog_ratio`] = r.backlog_processing_per_s;
    f[`peers.${pair}.herd_p99_ratio`] = r.herd_p99_ms;
  }
  const s = runs.scale;
  if (s?.verdict) {
    f['scale.stored_tasks'] = s.options.stored;
    f['scale.ready_after_ms_empty_big'] = `${s.empty.service.ready_after_ms}/${s.big.service.ready_after_ms}`;
    f['scale.big_main_peak_rss_mb'] = s.verdict.big_main_peak_rss_mb;
    f['scale.end_to_end_ratio_big_empty'] = s.verdict.end_to_end_ratio;
  }
  return f;
}

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  const dash = argv.indexOf('--');
  const extra = dash >= 0 ? argv.slice(dash + 1) : [];
  const own = dash >= 0 ? argv.slice(0, dash) : argv;
  if (own.includes('--help')) {
    process.stdout.write(
      'bench-all: quick throughput, cron and peer benchmarks into load-tests/results/latest.json\n  --only LIST   comma list of throughput,cron,peers\n  -- ARGS       extra arguments for every benchmark\n',
    );
    return 0;
  }
  const onlyAt = own.indexOf('--only');
  const only = onlyAt >= 0 ? new Set((own[onlyAt + 1] ?? '').split(',')) : null;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sched-bench-all-'));
  const report: Record<string, any> = {
    generated_at: new Date().toISOString(),
    machine: { cpus: os.cpus().length, cpu_model: os.cpus()[0]?.model ?? null, node: process.version, loadavg_at_start: loadavgs() },
    git: gitInfo(),
    steps: {} as Record<string, unknown>,
    figures: {},
    runs: {} as Record<string, unknown>,
  };
  let failed = false;
  for (const step of STEPS) {
    if (only && !only.has(step.name)) continue;
    process.stderr.write(`\n[bench] ===== ${step.name}: node dist/load-tests/${step.entry} ${step.args.join(' ')} =====\n`);
    const out = path.join(tmp, `${step.name}.json`);
    const res = await runStep(step, out, extra);
    report.steps[step.name] = { exit_code: res.code, seconds: res.seconds, loadavg_after: loadavgs() };
    if (res.code !== 0) failed = true;
    try {
      report.runs[step.name] = JSON.parse(fs.readFileSync(out, 'utf8'));
    } catch {
      report.runs[step.name] = { error: `no results (exit code ${res.code})` };
    }
  }
  fs.rmSync(tmp, { recursive: true, force: true });
  report.machine.loadavg_at_end = loadavgs();
  report.figures = figures(report.runs);
  const file = path.join(RESULTS_DIR, 'latest.json');
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  const lines = [
    `bench (quick)  load average 1/5/15 min at start ${report.machine.loadavg_at_start.join(' ')}, at end ${report.machine.loadavg_at_end.join(' ')}`,
  ];
  for (const [name, s] of Object.entries(report.steps as Record<string, { exit_code: number; seconds: number }>))
    lines.push(`  ${name}: exit ${s.exit_code}, ${s.seconds} s`);
  for (const [k, v] of Object.entries(report.figures as Record<string, unknown>)) lines.push(`  ${k.padEnd(48)} ${v ?? '-'}`);
  lines.push(`written to ${path.relative(process.cwd(), file)}`);
  process.stdout.write(`${lines.join('\n')}\n`);
  return failed ? 1 : 0;
}

if (require.main === module) exitWith('bench-all', main());
