/**
 * Flag parsing shared by the bench harnesses (bench-throughput, bench-cron, bench-tenants,
 * bench-peers): node:util parseArgs in strict mode, UsageError for bad flags (exit code 2), the
 * bounded number readers, comma lists of known names, and the flags every harness that starts our
 * service takes (--timeout, --workers, --worker-concurrency, --partitions, --log-level, --cpu-prof,
 * --out, --keep-tmp).
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { RESULTS_DIR } from './paths';

/** A bad flag or value: the harness prints the message and its --help text and exits with 2. */
export class UsageError extends Error {}

/** Parsed flag values by flag name (`--batch-size` → `values['batch-size']`). */
export type FlagValues = Record<string, string | boolean | undefined>;

/**
 * Parses `argv` strictly (no positionals) with `strings` as value flags and `booleans` (plus
 * `--help`) as switches.
 * @returns the values, or null for `--help`
 * @throws UsageError for an unknown flag or a missing value (parseArgs' message)
 */
export function parseFlags(argv: string[], strings: readonly string[], booleans: readonly string[] = []): FlagValues | null {
  const options: Record<string, { type: 'string' | 'boolean' }> = {};
  for (const f of strings) options[f] = { type: 'string' };
  for (const f of [...booleans, 'help']) options[f] = { type: 'boolean' };
  let values: FlagValues;
  try {
    values = parseArgs({ args: argv, strict: true, allowPositionals: false, options }).values as FlagValues;
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  return values.help ? null : values;
}

/** The string value of `--name`, or undefined when absent. */
export const str = (values: FlagValues, name: string): string | undefined => values[name] as string | undefined;

/**
 * The number given to `--name` (any finite number), `def` when absent.
 * @throws UsageError when it is not a number in [min, max]
 */
export function num(values: FlagValues, name: string, def: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = str(values, name);
  if (raw === undefined) return def;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min || n > max)
    throw new UsageError(`--${name} must be a number in [${min}, ${max}], got ${JSON.stringify(raw)}`);
  return n;
}

/** As num(), rounded down to an integer (a fraction is accepted and truncated). */
export const int = (values: FlagValues, name: string, def: number, min: number, max?: number): number =>
  Math.floor(num(values, name, def, min, max));

/** As int(), but null when absent (the service's own config then applies). */
export const intOrNull = (values: FlagValues, name: string, min: number, max: number): number | null =>
  str(values, name) === undefined ? null : int(values, name, 0, min, max);

/**
 * A strict integer flag: `def` when absent.
 * @throws UsageError when it is not an integer in [min, max] (a fraction is refused)
 */
export function strictInt(values: FlagValues, name: string, def: number, min: number, max: number): number {
  const raw = str(values, name);
  if (raw === undefined) return def;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new UsageError(`--${name} must be an integer in [${min}, ${max}], got ${JSON.stringify(raw)}`);
  return n;
}

/**
 * A comma list of known names (`--scenarios throughput,paced`), `def` when absent; blanks dropped.
 * `noun` names an entry in the error ("scenario", "system"); `listKnown` adds the known names.
 * @throws UsageError for a name not in `known`
 */
export function nameList<T extends string>(
  values: FlagValues,
  name: string,
  def: string,
  known: readonly T[],
  noun: string,
  listKnown = false,
): Set<T> {
  const out = new Set<T>();
  for (const s of (str(values, name) ?? def)
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean)) {
    if (!(known as readonly string[]).includes(s))
      throw new UsageError(`--${name}: unknown ${noun} ${JSON.stringify(s)}${listKnown ? ` (known: ${known.join(', ')})` : ''}`);
    out.add(s as T);
  }
  return out;
}

/** The value flags of serviceFlags() (`--cpu-prof` only where the harness offers it). */
export const SERVICE_FLAGS = ['timeout', 'workers', 'worker-concurrency', 'partitions', 'log-level', 'out'] as const;

/** The service settings and run bounds every harness that starts our service reads. */
export interface ServiceFlags {
  /** Overall time bound of the run (s). */
  timeoutS: number;
  /** WORKERS, WORKER_CONCURRENCY, PARTITIONS of the service; null = its config. */
  workers: number | null;
  workerConcurrency: number | null;
  partitions: number | null;
  logLevel: string;
  /** Absolute results file. */
  out: string;
  keepTmp: boolean;
}

/**
 * Reads SERVICE_FLAGS and `--keep-tmp`: `--timeout` (default `timeoutS`, 1 s .. 24 h), the
 * service's workers (1..64), worker concurrency (1..10,000), partitions (1..4,096), log level
 * (default info) and `--out` (default `outFile` in load-tests/results/).
 * @throws UsageError for a number out of range
 */
export function serviceFlags(values: FlagValues, defaults: { timeoutS: number; outFile: string }): ServiceFlags {
  return {
    timeoutS: num(values, 'timeout', defaults.timeoutS, 1, 24 * 3600),
    workers: intOrNull(values, 'workers', 1, 64),
    workerConcurrency: intOrNull(values, 'worker-concurrency', 1, 10_000),
    partitions: intOrNull(values, 'partitions', 1, 4096),
    logLevel: str(values, 'log-level') ?? 'info',
    out: outFile(values, defaults.outFile),
    keepTmp: values['keep-tmp'] === true,
  };
}

/** `--out` resolved against the working directory, or `file` in load-tests/results/. */
export const outFile = (values: FlagValues, file: string): string => path.resolve(str(values, 'out') ?? path.join(RESULTS_DIR, file));

/** `--cpu-prof DIR` resolved, or null. */
export const cpuProfDir = (values: FlagValues): string | null => {
  const dir = str(values, 'cpu-prof');
  return dir ? path.resolve(dir) : null;
};
