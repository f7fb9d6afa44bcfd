/**
 * bench-scale (issue 8, scale): the service on an empty store, then on one holding millions of
 * SCHEDULED tasks; start-up time, RSS and the throughput of due (run-now) tasks on each, and the
 * ratios. Each phase is a fresh service (service-run.ts) whose temp dir gets its store before start:
 * none, or a hard link to the run's one working copy of the big store.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { gitInfo, loadavg1m, machineInfo, readServiceDefaults, serviceInfo, Table, writeResults } from '../results-file';
import { readMem } from '../proc-sampler';
import { recordStep, runHarness } from '../run-harness';
import { sleep } from '../run-control';
import { throughputScenario } from '../scenarios/throughput';
import { withService } from '../service-run';
import { round } from '../stats';
import { SCHEMA_VERSION } from '../../../src/storage/sqlite/migrations';
import { fillStore } from './fill-store';
import { DueBatch, dueRun, writeDueBatch } from './due-run';
import { parseScaleOptions, SCALE_HELP, ScaleOptions } from './scale-options';

const log = (msg: string) => process.stderr.write(`[bench-scale] ${msg}\n`);

/** The verdict bounds of the issue: RSS with the big store, and its throughput against the empty one. */
export const RSS_LIMIT_MB = 1024;
export const THROUGHPUT_RATIO_MIN = 0.9;

/**
 * The run's working copy of the big store, made once: built in a temp dir of its own, or copied
 * there from the cache (or built into the cache first). Every big phase then opens this same
 * file (a hard link in its temp dir), so no phase starts right after a multi-gigabyte write: with
 * a fresh copy before each big phase, the big phases alone ran after writing ~2.9 GB, and on this
 * machine's disk that alone made them 10–25 % slower (end-to-end big ÷ empty 0.76–0.89 with a copy
 * per phase, 0.99–1.06 on one file in the same session). Each big phase adds its `--tasks`
 * finished tasks to it (50,000 per round against 10,000,000 SCHEDULED). Removed at exit.
 * @param info receives fill_ms or copy_ms, cached_store
 * @returns the working file
 */
async function workingBigStore(o: ScaleOptions, partitions: number, info: Record<string, unknown>): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sched-bench-scale-store-'));
  process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'scheduler.db');
  const spec = { count: o.stored, partitions, spreadHours: o.spreadHours, startAfterMs: o.startAfterHours * 3_600_000 };
  const progress = (done: number) => {
    if (done % 1_000_000 === 0 || done === o.stored) log(`  ${done} tasks written`);
  };
  if (!o.storeCache) {
    log(`building a store of ${o.stored} SCHEDULED tasks`);
    info.fill_ms = round(await fillStore({ file, ...spec, progress }), 0);
    return file;
  }
  // Named by schema version too: a store cached by an older build would be migrated at each
  // start, and its start-up time would then include rebuilding indexes over millions of rows.
  const cached = path.join(o.storeCache, `scale-${o.stored}-h${o.spreadHours}-p${partitions}-v${SCHEMA_VERSION}.db`);
  // Its due times count from when it was built: older than the first due time minus an hour, it
  // would have tasks coming due during the run, so it is built again.
  const stale = fs.existsSync(cached) && Date.now() - fs.statSync(cached).mtimeMs > (o.startAfterHours - 1) * 3_600_000;
  if (stale) fs.rmSync(cached);
  if (!fs.existsSync(cached)) {
    log(`building the cached store ${cached}`);
    fs.mkdirSync(o.storeCache, { recursive: true });
    info.fill_ms = round(await fillStore({ file: `${cached}.tmp`, ...spec, progress }), 0);
    fs.renameSync(`${cached}.tmp`, cached);
  }
  const t0 = performance.now();
  fs.copyFileSync(cached, file);
  info.copy_ms = round(performance.now() - t0, 0);
  info.cached_store = cached;
  log(`copied the cached store (${info.copy_ms} ms)`);
  return file;
}

/** Puts the run's working big store into a phase's `tmpDir` (a hard link: the same file). */
function linkBigStore(working: string, tmpDir: string, phase: Record<string, unknown>): void {
  const file = path.join(tmpDir, 'scheduler.db');
  fs.linkSync(working, file);
  phase.store_mb = round(fs.statSync(file).size / 1048576, 0);
}

/**
 * One phase: a service on its store, its start-up, RSS when ready, the due run (with
 * `--due-tasks`), and the throughput run.
 */
async function phase(
  o: ScaleOptions,
  partitions: number,
  guard: Parameters<Parameters<typeof runHarness<ScaleOptions>>[0]['run']>[1],
  bigFile: string | null,
): Promise<{ phase: Record<string, any>; failed: boolean }> {
  const big = bigFile !== null;
  const out: Record<string, any> = { stored_tasks: big ? o.stored : 0, service: {}, errors: [] as string[] };
  let due: DueBatch | null = null;
  const prepare = async (dir: string) => {
    if (bigFile !== null) linkBigStore(bigFile, dir, out);
    if (o.dueTasks > 0) due = await writeDueBatch(path.join(dir, 'scheduler.db'), o.dueTasks, partitions, o.dueAfterS);
  };
  const spec = {
    tag: '[bench-scale]',
    tmpPrefix: 'sched-bench-scale-',
    settings: { ...o, cpuProfDir: null },
    maxSockets: Math.max(64, o.concurrency * 2),
    report: out,
    guard,
    prepare: bigFile !== null || o.dueTasks > 0 ? prepare : undefined,
  };
  const failed = await withService(spec, async ({ svc, client }) => {
    const pid = svc.child?.pid;
    out.rss_when_ready_mb = pid ? round((readMem(pid)?.rssKb ?? 0) / 1024, 0) : null;
    out.load_at_start = loadavg1m();
    const batch = due as DueBatch | null;
    if (batch) {
      log(`${big ? 'big' : 'empty'} store: ready after ${out.service.ready_after_ms} ms; due run of ${batch.count} tasks`);
      if (!(await recordStep(out, 'due', 'due run', out.errors, () => dueRun(client, batch, o.pollMs)))) return true;
    }
    log(`${big ? 'big' : 'empty'} store: ready after ${out.service.ready_after_ms} ms; throughput run of ${o.tasks} tasks`);
    const ok = await recordStep(out, 'throughput', 'throughput', out.errors, () => throughputScenario(client, svc, o));
    await sleep(300);
    return !ok;
  });
  return { phase: out, failed };
}

function table(r: Record<string, any>): string {
  const t = new Table(46);
  t.lines.push(`bench-scale  (${r.machine.cpus} cpus, node ${r.machine.node}, ${r.options.stored} SCHEDULED tasks in the big store)`);
  for (const key of ['empty', 'big'] as const) {
    const p = r[key];
    if (!p) continue;
    const fillMs = key === 'big' ? r.big_store?.fill_ms : undefined;
    t.lines.push(
      `${key} store${p.store_mb !== undefined ? ` (${p.store_mb} MB${fillMs !== undefined ? `, built in ${round(fillMs / 1000, 1)} s` : ''})` : ''}`,
    );
    t.row('start-up: spawn → /readyz (ms)', p.service?.ready_after_ms);
    t.row(
      'RSS when ready / peak main / peak total (MB)',
      `${p.rss_when_ready_mb} / ${p.resources?.main_peak_rss_mb} / ${p.resources?.total_peak_rss_mb}`,
    );
    const tp = p.throughput;
    if (tp?.end_to_end) {
      t.row('submit / end-to-end (tasks/s)', `${tp.submit.tasks_per_s} / ${tp.end_to_end.tasks_per_s}`);
      t.row('dispatch lag p50 / p99 (ms)', `${tp.dispatch_lag.p50_ms} / ${tp.dispatch_lag.p99_ms}`);
    } else if (tp?.error) t.lines.push(`  throughput: FAILED ${tp.error}`);
    if (p.due?.tasks_per_s !== undefined) t.row(`due run: ${p.due.tasks} tasks due at once (tasks/s)`, p.due.tasks_per_s);
    else if (p.due?.error) t.lines.push(`  due run: FAILED ${p.due.error}`);
  }
  if (r.rounds.length > 1) {
    t.lines.push(`(the two stores above: the last of ${r.rounds.length} rounds)`);
    t.row('end-to-end big / empty, each round', r.rounds.map((x: Record<string, any>) => x.end_to_end_ratio ?? '-').join(' / '));
    if (r.options.due_tasks > 0)
      t.row('due run big / empty, each round', r.rounds.map((x: Record<string, any>) => x.due_ratio ?? '-').join(' / '));
  }
  if (r.verdict) {
    t.row(`big-store peak RSS <= ${RSS_LIMIT_MB} MB (main process)`, r.verdict.rss_ok ? 'met' : 'NOT met');
    const which = r.rounds.length > 1 ? `median of ${r.rounds.length}` : 'end-to-end';
    t.row(
      `${which} big / empty >= ${THROUGHPUT_RATIO_MIN}`,
      `${r.verdict.end_to_end_ratio} ${r.verdict.throughput_ok ? 'met' : 'NOT met'}`,
    );
    if (r.verdict.due_ratio !== undefined) {
      t.row(
        `due run: ${r.rounds.length > 1 ? `median of ${r.rounds.length}` : 'due rate'} big / empty >= ${THROUGHPUT_RATIO_MIN}`,
        `${r.verdict.due_ratio} ${r.verdict.due_ok ? 'met' : 'NOT met'}`,
      );
    }
  }
  return t.text(r);
}

/** The median of `xs` (the lower middle one for an even count). */
function lowerMedian(xs: number[]): number {
  const sorted = xs.slice().sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

/** Runs bench-scale with the process's arguments. @returns the exit code (0 ok, 1 failed, 2 usage) */
export function mainScale(): Promise<number> {
  return runHarness<ScaleOptions>({
    name: 'bench-scale',
    help: SCALE_HELP,
    parse: parseScaleOptions,
    write: (report, o) => writeResults(report, { out: o.out, tag: '[bench-scale]', table: table(report) }),
    async run(o, guard) {
      const report: Record<string, any> = {
        generated_at: new Date().toISOString(),
        ok: false,
        machine: machineInfo(),
        git: gitInfo(),
        service: { ...serviceInfo(o, 'sqlite (temp file)', readServiceDefaults()), log_level: o.logLevel },
        options: {
          stored: o.stored,
          spread_hours: o.spreadHours,
          start_after_hours: o.startAfterHours,
          tasks: o.tasks,
          batch_size: o.batchSize,
          concurrency: o.concurrency,
          timeout_s: o.timeoutS,
          due_tasks: o.dueTasks,
          due_after_s: o.dueAfterS,
        },
        errors: [] as string[],
      };
      let failed = false;
      report.rounds = [] as Array<Record<string, any>>;
      report.big_store = {};
      const partitions = Number(report.service.partitions ?? 64);
      const bigFile = await workingBigStore(o, partitions, report.big_store);
      for (let n = 1; n <= o.rounds; n++) {
        const pair: Record<string, any> = {};
        for (const big of [false, true]) {
          const r = await phase(o, partitions, guard, big ? bigFile : null);
          pair[big ? 'big' : 'empty'] = r.phase;
          report.errors.push(...r.phase.errors.map((e: string) => `${o.rounds > 1 ? `round ${n} ` : ''}${big ? 'big' : 'empty'}: ${e}`));
          failed ||= r.failed;
        }
        const e2e = (k: string) => pair[k]?.throughput?.end_to_end?.tasks_per_s as number | undefined;
        if (e2e('empty') && e2e('big')) pair.end_to_end_ratio = round((e2e('big') as number) / (e2e('empty') as number), 3);
        const dueRate = (k: string) => pair[k]?.due?.tasks_per_s as number | undefined;
        if (dueRate('empty') && dueRate('big')) pair.due_ratio = round((dueRate('big') as number) / (dueRate('empty') as number), 3);
        report.rounds.push(pair);
        report.empty = pair.empty;
        report.big = pair.big;
      }
      const ratios = (report.rounds as Array<Record<string, any>>).map((p) => p.end_to_end_ratio as number | undefined);
      const dueRatios = (report.rounds as Array<Record<string, any>>).map((p) => p.due_ratio as number | undefined);
      if (ratios.every((x) => x !== undefined)) {
        const ratio = lowerMedian(ratios as number[]);
        const peak = Math.max(...(report.rounds as Array<Record<string, any>>).map((p) => p.big.resources?.main_peak_rss_mb as number));
        report.verdict = {
          end_to_end_ratio: ratio,
          end_to_end_ratios: ratios,
          throughput_ok: ratio >= THROUGHPUT_RATIO_MIN,
          big_main_peak_rss_mb: peak,
          rss_ok: peak <= RSS_LIMIT_MB,
        };
        if (o.dueTasks > 0 && dueRatios.every((x) => x !== undefined)) {
          report.verdict.due_ratio = lowerMedian(dueRatios as number[]);
          report.verdict.due_ratios = dueRatios;
          report.verdict.due_ok = report.verdict.due_ratio >= THROUGHPUT_RATIO_MIN;
        }
      }
      return { report, failed };
    },
  });
}
