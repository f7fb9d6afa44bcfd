/**
 * The run control every bench harness shares, from the flags to the exit code: flags parsed (bad
 * flags → message + --help on stderr, exit code 2; --help → stdout, 0), the built service entry
 * checked, the overall timeout (aborts the run-wide signal), a hard failsafe after it (kills what
 * the run started, exit code 124), SIGINT/SIGTERM (the first aborts the run, the second kills and
 * exits with 130), the kill at process exit of a service still running, `ok` and `duration_s`
 * in the report, and the report written (exit code 0 ran to the end, 1 something failed).
 * withService() (service-run.ts) adds the one-service skeleton of bench-throughput and bench-cron.
 */
import fs from 'node:fs';
import { SERVICE_ENTRY } from './paths';
import { run } from './run-control';
import { round } from './stats';

/** What runHarness reads of a harness's options. */
export interface HarnessOptions {
  /** Overall time bound of the run (s). */
  timeoutS: number;
}

/** The failsafes of one run, given to the harness's body. */
export interface RunGuard {
  /**
   * Names the synchronous last resort (SIGKILL what the run started, remove its temp dir) used by
   * the hard failsafe and a second signal; when `runningAtExit` is given, it is also called at
   * process exit while that returns true. A later call replaces the earlier one.
   */
  onKill(killNow: () => void, runningAtExit?: () => boolean): void;
}

/** One harness: its name, flags and body. */
export interface Harness<O extends HarnessOptions> {
  /** Program name, e.g. `bench-cron` (prefixes the hard-timeout message). */
  name: string;
  /** The --help text. */
  help: string;
  /** @returns the options, or null for --help. @throws Error (UsageError) for bad flags */
  parse(argv: string[]): O | null;
  /** Whether this run starts our service, whose entry must then be built (default: always). */
  needsService?(o: O): boolean;
  /** What the hard failsafe kills, for its message (default `the service`). */
  hardKills?: string;
  /** Time after the overall timeout before the hard failsafe fires (ms; default 25,000: 10 s SIGTERM grace + margin). */
  hardMarginMs?: number;
  /**
   * Runs the benchmark: returns the report (without `ok` and `duration_s`) and whether something
   * failed. Expected failures are recorded in the report, not thrown.
   */
  run(o: O, guard: RunGuard): Promise<{ report: Record<string, any>; failed: boolean }>;
  /** Writes the finished report (stdout, results file, table). */
  write(report: Record<string, any>, o: O): void;
}

/**
 * Arms the overall timeout, the hard failsafe and the signal handlers for a run bounded by
 * `timeoutS` seconds.
 * @returns the guard for the body, and disarm() that clears both timers (the handlers stay)
 */
function armFailsafes(h: Harness<HarnessOptions>, timeoutS: number): RunGuard & { disarm(): void } {
  const kill: { now: () => void; runningAtExit: (() => boolean) | null } = { now: () => undefined, runningAtExit: null };
  const timeoutMs = timeoutS * 1000;
  const overall = setTimeout(() => run.abort(new Error(`overall timeout of ${timeoutS} s reached`)), timeoutMs);
  overall.unref();
  // Last resort if graceful cleanup itself hangs.
  const hard = setTimeout(
    () => {
      process.stderr.write(`${h.name}: hard timeout, killing ${h.hardKills ?? 'the service'}\n`);
      kill.now();
      process.exit(124);
    },
    timeoutMs + (h.hardMarginMs ?? 25_000),
  );
  hard.unref();
  const onSignal = (sig: NodeJS.Signals) => {
    if (run.signal.aborted) {
      kill.now();
      process.exit(130);
    }
    run.abort(new Error(`interrupted by ${sig}`));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('exit', () => {
    if (kill.runningAtExit?.()) kill.now();
  });
  return {
    onKill(killNow, runningAtExit) {
      kill.now = killNow;
      kill.runningAtExit = runningAtExit ?? null;
    },
    disarm() {
      clearTimeout(overall);
      clearTimeout(hard);
    },
  };
}

/**
 * Runs a harness with `argv` (default: the process's arguments) from the flags to the written
 * report.
 * @returns the exit code: 0 ran to the end, 1 something failed, 2 usage (bad flags, service not built)
 */
export async function runHarness<O extends HarnessOptions>(h: Harness<O>, argv: string[] = process.argv.slice(2)): Promise<number> {
  let opts: O | null;
  try {
    opts = h.parse(argv);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n\n${h.help}`);
    return 2;
  }
  if (opts === null) {
    process.stdout.write(h.help);
    return 0;
  }
  if ((h.needsService?.(opts) ?? true) && !fs.existsSync(SERVICE_ENTRY)) {
    process.stderr.write(`${SERVICE_ENTRY} not found: run \`npm run build\` first\n`);
    return 2;
  }
  const startedWall = Date.now();
  const guard = armFailsafes(h as unknown as Harness<HarnessOptions>, opts.timeoutS);
  let result: { report: Record<string, any>; failed: boolean };
  try {
    result = await h.run(opts, guard);
  } finally {
    guard.disarm();
  }
  const { report, failed } = result;
  report.ok = !failed;
  report.duration_s = round((Date.now() - startedWall) / 1000, 1);
  h.write(report, opts);
  return failed ? 1 : 0;
}

/**
 * Runs one step of a harness (a scenario) and records its result as `into[key]`; a failure is
 * recorded as `into[key] = {error}` and in `errors` as `label: message`, and does not throw.
 * @returns whether the step succeeded
 */
export async function recordStep(
  into: Record<string, unknown>,
  key: string,
  label: string,
  errors: string[],
  fn: () => Promise<Record<string, unknown>>,
): Promise<boolean> {
  try {
    into[key] = await fn();
    return true;
  } catch (err) {
    const msg = (err as Error).message;
    into[key] = { error: msg };
    errors.push(`${label}: ${msg}`);
    return false;
  }
}

/**
 * An entry point's last step: sets process.exitCode to the promised exit code; an unexpected
 * error prints `<name> failed: <stack>` to stderr and sets 1.
 */
export function exitWith(name: string, code: Promise<number>): void {
  code.then(
    (c) => {
      process.exitCode = c;
    },
    (err) => {
      process.stderr.write(`${name} failed: ${(err as Error).stack ?? err}\n`);
      process.exitCode = 1;
    },
  );
}
