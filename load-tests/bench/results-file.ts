/**
 * The parts of a bench report every harness shares: which code and machine were measured (git
 * HEAD and dirty paths, CPUs, memory, Node, load average), the service settings it ran with, the
 * short human table on stderr, and the output: the JSON to stdout and to the results file
 * (`--out`), optionally appended as one line to a history file so that runs accumulate.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ServiceFlags } from './flags';
import { ROOT, SERVICE_ENTRY } from './paths';

/** Which code was measured: HEAD and the files changed on top of it (other work in progress). */
export function gitInfo(): { commit: string | null; dirty_paths: string[] } {
  try {
    const commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const status = execFileSync('git', ['status', '--porcelain', '--', 'src', 'config', 'package.json'], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    return {
      commit,
      dirty_paths: status
        .split('\n')
        .filter(Boolean)
        .map((l) => l.slice(3)),
    };
  } catch {
    return { commit: null, dirty_paths: [] };
  }
}

/** The service's config/default.json ({} when unreadable). */
export function readServiceDefaults(): Record<string, unknown> {
  try {
    return JSON.parse(fs.readFileSync(path.join(ROOT, 'config', 'default.json'), 'utf8')) as Record<string, unknown>;
  } catch {
    return {};
  }
}

/** The 1-minute load average, 2 decimals. */
export const loadavg1m = (): number => Number(os.loadavg()[0].toFixed(2));

/** The 1, 5 and 15-minute load averages, 2 decimals each. */
export const loadavgs = (): number[] => os.loadavg().map((l) => Number(l.toFixed(2)));

/** The machine block of a report: CPUs, CPU model, memory (MB), Node version, platform. */
export function machineInfo(): { cpus: number; cpu_model: string | null; total_mem_mb: number; node: string; platform: string } {
  return {
    cpus: os.cpus().length,
    cpu_model: os.cpus()[0]?.model ?? null,
    total_mem_mb: Math.round(os.totalmem() / 1048576),
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
  };
}

/**
 * The opening of a report's service block: entry point, store, and workers, worker concurrency
 * and partitions as set by the flags or else by the service's config/default.json (`defaults`).
 */
export function serviceInfo(
  o: Pick<ServiceFlags, 'workers' | 'workerConcurrency' | 'partitions'>,
  store: string,
  defaults: Record<string, unknown>,
): Record<string, unknown> {
  return {
    entry: path.relative(ROOT, SERVICE_ENTRY),
    store,
    workers: o.workers ?? defaults.workers ?? null,
    worker_concurrency: o.workerConcurrency ?? defaults.workerConcurrency ?? null,
    partitions: o.partitions ?? defaults.partitions ?? null,
  };
}

/** A short table: `row(label, value)` lines with the label padded to `width`; `text(report)` ends it. */
export class Table {
  readonly lines: string[] = [];

  constructor(private readonly width = 44) {}

  /** One line: the label padded, then the value ('-' when null or undefined). Bound: can be destructured. */
  readonly row = (k: string, v: unknown): void => {
    this.lines.push(`  ${k.padEnd(this.width)} ${v ?? '-'}`);
  };

  /** The lines, then the report's errors (if any) on one line. */
  text(r: { errors?: string[] }): string {
    if (r.errors?.length) this.lines.push(`errors: ${r.errors.join(' | ')}`);
    return this.lines.join('\n');
  }
}

/** Where and how a report is written. */
export interface ResultsTarget {
  /** The results file (absolute); its folder is created. */
  out: string;
  /** A JSON-lines file the report is appended to as one line, or none. */
  history?: string;
  /** The log prefix, e.g. `[bench-cron]`. */
  tag: string;
  /** The short table for stderr. */
  table: string;
}

const rel = (file: string): string => path.relative(process.cwd(), file) || file;

/** Writes the JSON to `out` (and one line to `history`) and stdout; the table and the file names to stderr. */
export function writeResults(report: Record<string, unknown>, t: ResultsTarget): void {
  const json = JSON.stringify(report, null, 2);
  fs.mkdirSync(path.dirname(t.out), { recursive: true });
  fs.writeFileSync(t.out, `${json}\n`);
  if (t.history) {
    fs.mkdirSync(path.dirname(t.history), { recursive: true });
    fs.appendFileSync(t.history, `${JSON.stringify(report)}\n`);
  }
  process.stdout.write(`${json}\n`);
  process.stderr.write(`${t.table}\n${t.tag} written to ${rel(t.out)}${t.history ? ` (+ ${rel(t.history)})` : ''}\n`);
}
