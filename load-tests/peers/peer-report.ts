/**
 * The bench-peers results: the report's opening fields (machine, load average, code, settings),
 * the ratios ours ÷ peer, the medians over rounds, the short table, and writing the JSON (stdout and the results file).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gitInfo, loadavgs, readServiceDefaults, Table, writeResults } from '../bench/results-file';
import { median, round } from '../bench/stats';
import type { PeerOptions } from './peer-options';

const pkgVersion = (name: string): string | null => {
  try {
    return (JSON.parse(fs.readFileSync(require.resolve(`${name}/package.json`), 'utf8')) as { version: string }).version;
  } catch {
    try {
      // agenda's exports map hides package.json; find it next to its entry point.
      let dir = path.dirname(require.resolve(name));
      while (!fs.existsSync(path.join(dir, 'package.json'))) dir = path.dirname(dir);
      return (JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version: string }).version;
    } catch {
      return null;
    }
  }
};

export function initialPeerReport(o: PeerOptions): Record<string, any> {
  const d = readServiceDefaults();
  return {
    generated_at: new Date().toISOString(),
    ok: false,
    machine: { cpus: os.cpus().length, cpu_model: os.cpus()[0]?.model ?? null, node: process.version, loadavg_at_start: loadavgs() },
    git: gitInfo(),
    versions: {
      bullmq: pkgVersion('bullmq'),
      agenda: pkgVersion('agenda'),
      '@agendajs/redis-backend': pkgVersion('@agendajs/redis-backend'),
      ioredis: pkgVersion('ioredis'),
      'graphile-worker': pkgVersion('graphile-worker'),
      'pg-boss': pkgVersion('pg-boss'),
      pg: pkgVersion('pg'),
    },
    settings: {
      ours: `${ourSlots(o.workerConcurrency, d.workerConcurrency)} (workers ${d.workers}, partitions ${d.partitions}), SQLite WAL synchronous=FULL, LOG_LEVEL=${o.logLevel}; batches of ${o.batchSize}, ${o.inFlight} in flight`,
      bullmq: `one Worker process per run, concurrency ${o.bullmqConcurrency.join(' / ')}; addBulk of ${o.batchSize}, ${o.inFlight} in flight; completed jobs kept (removeOnComplete unset)`,
      agenda: `Redis backend (@agendajs/redis-backend, Pub/Sub notifications); one process, processEvery ${o.agendaProcessEveryMs} ms, defaultConcurrency = maxConcurrency = ${o.agendaConcurrency}, lockLimit = defaultLockLimit = ${o.agendaLockLimit} (none when 0); now()/schedule() one job per call, ${o.agendaInFlight} in flight`,
      graphile: `one run() process per scenario, concurrency ${o.graphileConcurrency}, maxPoolSize ${o.graphileConcurrency + 1}, otherwise defaults (no local queue, no completion batching, pollInterval 2 s); addJobs of ${o.batchSize}, ${o.inFlight} in flight`,
      graphile_batched: `as graphile plus its published batching: localQueue { size: 500 }, completeJobBatchDelay 0, failJobBatchDelay 0`,
      pgboss: `one process per scenario, ${o.pgbossWorkers} work() call(s) with batchSize ${o.pgbossBatchSize}, pollingIntervalSeconds ${o.pgbossPollingMs / 1000}, otherwise defaults; insert of ${o.batchSize}, ${o.inFlight} in flight`,
      ours_store: o.oursStore === 'postgres' ? 'SCHEDULER_STORE=postgres, POSTGRES_URL = a fresh database each round' : 'sqlite (default)',
      redis: null as string | null,
      postgres: null as string | null,
    },
    options: { ...o, systems: [...o.systems] },
    systems: {} as Record<string, Record<string, any>>,
    ratios: {} as Record<string, unknown>,
    rounds: [] as Array<{ systems: Record<string, Record<string, any>>; ratios: Record<string, unknown> }>,
    errors: [] as string[],
  };
}

function cpuOf(e: Record<string, any>): number | null {
  if (e.service_resources) return round(e.service_resources.main_cpu_s + e.service_resources.workers_cpu_s, 2);
  if (e.consumer_resources) return round(e.consumer_resources.main_cpu_s + (e.redis_cpu_s ?? 0) + (e.postgres_cpu_s ?? 0), 2);
  return null;
}

/** The headline figures of one system (rates in tasks/s, lateness in ms). */
export function headline(sys: Record<string, any>): Record<string, number | null> {
  const b = sys.backlog ?? {};
  const e = sys.e2e ?? {};
  const h = sys.herd ?? {};
  return {
    tasks: e.tasks ?? b.tasks ?? null,
    enqueue_per_s: b.enqueue?.tasks_per_s ?? null,
    backlog_processing_per_s: b.processing?.tasks_per_s ?? null,
    end_to_end_per_s: e.end_to_end?.tasks_per_s ?? null,
    // CPU seconds of the e2e scenario: the system's own processes (ours: main + workers; a peer:
    // its consumer process + the bench's redis-server or PostgreSQL), and the bench process (HTTP client, or
    // the peer's producer).
    end_to_end_system_cpu_s: cpuOf(e),
    end_to_end_bench_cpu_s: (e.service_resources ?? e.consumer_resources)?.harness_cpu_s ?? null,
    herd_tasks: h.tasks ?? null,
    herd_p50_ms: h.lateness?.p50_ms ?? null,
    herd_p99_ms: h.lateness?.p99_ms ?? null,
    herd_max_ms: h.lateness?.max_ms ?? null,
    herd_started_early: h.started_early ?? null,
  };
}

/** ours ÷ peer for every headline figure (rates: > 1 means ours is faster; lateness: < 1 means ours is less late). */
export function ratios(systems: Record<string, Record<string, any>>): Record<string, Record<string, number | null>> {
  const out: Record<string, Record<string, number | null>> = {};
  const ours = systems.ours ? headline(systems.ours) : null;
  if (!ours) return out;
  for (const [name, sys] of Object.entries(systems)) {
    if (name === 'ours') continue;
    const p = headline(sys);
    // Two significant digits, so that a ratio far below 1 does not round to 0.
    const r = (k: string) =>
      ours[k] !== null && p[k] !== null && p[k] !== 0 ? Number(((ours[k] as number) / (p[k] as number)).toPrecision(2)) : null;
    out[`ours/${name}`] = {
      enqueue_per_s: r('enqueue_per_s'),
      backlog_processing_per_s: r('backlog_processing_per_s'),
      end_to_end_per_s: r('end_to_end_per_s'),
      herd_p50_ms: r('herd_p50_ms'),
      herd_p99_ms: r('herd_p99_ms'),
      herd_max_ms: r('herd_max_ms'),
    };
  }
  return out;
}

/** Whether a system's backlog or e2e rate is over the jobs finished within the time bound only. */
function partialRate(sys: Record<string, any> | undefined, scenario: 'backlog' | 'e2e'): boolean {
  const figure = scenario === 'backlog' ? sys?.backlog?.processing : sys?.e2e?.end_to_end;
  return figure?.complete === false;
}

/**
 * Fills the report's summary from its rounds: `systems` and `ratios` are round 1's (the whole
 * report with one round, the default); with more rounds, `median` holds the median over the
 * rounds of each system's headline figures and of each ratio, and `ratio_ranges` the lowest and
 * highest of each ratio, and `median.partial` the rates that hit their time bound in some round
 * ("bullmq_c50 e2e"). A round that lacks a figure (a failed scenario) is left out of its median.
 */
export function summarizeRounds(report: Record<string, any>): void {
  const rounds = report.rounds as Array<{
    systems: Record<string, Record<string, any>>;
    ratios: Record<string, Record<string, number | null>>;
  }>;
  report.systems = rounds[0]?.systems ?? {};
  report.ratios = rounds[0]?.ratios ?? {};
  if (rounds.length < 2) return;
  const over = <T>(pick: (round: (typeof rounds)[number]) => Record<string, T> | undefined) => {
    const keys = new Set(rounds.flatMap((r) => Object.keys(pick(r) ?? {})));
    return [...keys].map((k) => [k, rounds.map((r) => pick(r)?.[k])] as const);
  };
  // Figures to two decimals (as the CPU seconds), ratios to two significant digits; a herd start
  // before its due time in any round is reported (the highest count, not the median).
  const medianOf = (values: Array<Record<string, number | null> | undefined>, fmt: (x: number) => number) =>
    Object.fromEntries(
      Object.keys(values.find((v) => v) ?? {}).map((f) => {
        const xs = values.map((v) => v?.[f]);
        const m = f === 'herd_started_early' ? Math.max(...xs.filter((x): x is number => typeof x === 'number')) : median(xs);
        return [f, m === null || !Number.isFinite(m) ? null : fmt(m)];
      }),
    );
  report.median = {
    rounds: rounds.length,
    headline: Object.fromEntries(
      over((r) => r.systems).map(([name, list]) => [
        name,
        medianOf(
          list.map((sys) => (sys ? headline(sys) : undefined)),
          (x) => round(x, 2) as number,
        ),
      ]),
    ),
    ratios: Object.fromEntries(over((r) => r.ratios).map(([pair, list]) => [pair, medianOf(list, (x) => Number(x.toPrecision(2)))])),
    // "system scenario" of each rate that hit its time bound in some round: its median is partial too.
    partial: over((r) => r.systems).flatMap(([name, list]) =>
      (['backlog', 'e2e'] as const).filter((sc) => list.some((sys) => partialRate(sys, sc))).map((sc) => `${name} ${sc}`),
    ),
  };
  report.ratio_ranges = Object.fromEntries(
    over((r) => r.ratios).map(([pair, list]) => [
      pair,
      Object.fromEntries(
        Object.keys(list.find((v) => v) ?? {}).map((f) => {
          const xs = list.map((v) => v?.[f]).filter((x): x is number => typeof x === 'number');
          return [f, xs.length ? [Math.min(...xs), Math.max(...xs)] : null];
        }),
      ),
    ]),
  );
}

/** The short table: one line per system (per round when there are several), the ratios, and the medians. */
export function peerTable(r: Record<string, any>): string {
  const table = new Table();
  const { lines } = table;
  const la = (x: number[] | undefined) => (x ? x.join(' ') : '-');
  lines.push(
    `bench-peers  (${r.machine.cpus} cpus, node ${r.machine.node}; load average 1/5/15 min at start ${la(r.machine.loadavg_at_start)}, at end ${la(r.machine.loadavg_at_end)})`,
  );
  const cols = ['system', 'N', 'enqueue/s', 'backlog/s', 'e2e/s', 'e2e cpu s', 'herd', 'late p50/p99/max ms', 'early'];
  const w = [26, 7, 10, 10, 8, 11, 6, 22, 5];
  const fmt = (cells: unknown[]) =>
    cells
      .map((c, i) =>
        String(c ?? '-')
          .padStart(i === 0 ? 0 : w[i])
          .padEnd(i === 0 ? w[0] : 0),
      )
      .join(' ');
  const ms = (x: number | null) => x ?? '-';
  /** One system's line; `mark(scenario)` is '*' for a rate over the jobs finished within the time bound. */
  const row = (label: string, h: Record<string, number | null>, mark: (scenario: 'backlog' | 'e2e') => string) =>
    fmt([
      label,
      h.tasks,
      h.enqueue_per_s,
      `${h.backlog_processing_per_s ?? '-'}${mark('backlog')}`,
      `${h.end_to_end_per_s ?? '-'}${mark('e2e')}`,
      `${h.end_to_end_system_cpu_s ?? '-'}+${h.end_to_end_bench_cpu_s ?? '-'}`,
      h.herd_tasks,
      `${ms(h.herd_p50_ms)} / ${ms(h.herd_p99_ms)} / ${ms(h.herd_max_ms)}`,
      h.herd_started_early,
    ]);
  lines.push(fmt(cols));
  const rounds = (r.rounds as Array<{ systems: Record<string, Record<string, any>> }> | undefined) ?? [{ systems: r.systems }];
  rounds.forEach((round, i) => {
    for (const [name, sys] of Object.entries(round.systems as Record<string, Record<string, any>>)) {
      const label = rounds.length > 1 ? `${i + 1}: ${name}` : name;
      if (sys.error && !sys.e2e && !sys.backlog && !sys.herd) {
        lines.push(`${label.padEnd(w[0])} FAILED ${sys.error}`);
        continue;
      }
      const mark = (sc: 'backlog' | 'e2e') => (partialRate(sys, sc) ? '*' : '');
      lines.push(row(label, headline(sys), mark));
    }
  });
  if (r.median) {
    const partial = new Set(r.median.partial as string[]);
    for (const [name, h] of Object.entries(r.median.headline as Record<string, Record<string, number | null>>)) {
      lines.push(row(`median ${name}`, h, (sc) => (partial.has(`${name} ${sc}`) ? '*' : '')));
    }
  }
  lines.push('  * = time bound reached: rate over the jobs finished within it');
  lines.push(
    '  e2e cpu s = system (ours: service + workers; peer: consumer + redis-server or PostgreSQL) + bench process (HTTP client / producer)',
  );
  const ratioLine = (k: string, v: Record<string, number | null>) =>
    lines.push(
      `  ${k.padEnd(28)} enqueue ${v.enqueue_per_s ?? '-'}x  backlog ${v.backlog_processing_per_s ?? '-'}x  e2e ${v.end_to_end_per_s ?? '-'}x  herd p99 lateness ${v.herd_p99_ms ?? '-'}x`,
    );
  const ratioRounds = (r.rounds as Array<{ ratios: Record<string, Record<string, number | null>> }> | undefined) ?? [{ ratios: r.ratios }];
  ratioRounds.forEach((round, i) => {
    for (const [k, v] of Object.entries(round.ratios as Record<string, Record<string, number | null>>))
      ratioLine(ratioRounds.length > 1 ? `${i + 1}: ${k}` : k, v);
  });
  for (const [k, v] of Object.entries((r.median?.ratios ?? {}) as Record<string, Record<string, number | null>>))
    ratioLine(`median ${k}`, v);
  return table.text(r);
}

/** Writes the JSON to `out` and stdout, and the short table to stderr. */
export function writePeerReport(report: Record<string, any>, out: string): void {
  writeResults(report, { out, tag: '[bench-peers]', table: peerTable(report) });
}

/**
 * Our WORKER_CONCURRENCY and where it came from: the flag wins, then the bench's environment
 * (inherited by the service), then config/default.json (`configured`).
 */
function ourSlots(flag: number | null, configured: unknown): string {
  if (flag !== null) return `service defaults, WORKER_CONCURRENCY ${flag} from --worker-concurrency`;
  const env = process.env.WORKER_CONCURRENCY;
  if (env !== undefined) return `service defaults, WORKER_CONCURRENCY ${env} from the environment`;
  return `service defaults, workerConcurrency ${configured}`;
}
