/**
 * Throughput / dispatch-lag / scheduling-accuracy benchmark for the scheduler service.
 *
 * Starts the real service (`node dist/src/main.js`) as a child process on a free port with a fresh
 * temporary SQLite file, waits for /readyz, runs three scenarios and prints one JSON object with
 * every figure to stdout (a short table goes to stderr). The JSON is also written to
 * `load-tests/results/latest.json`.
 *
 *   a. throughput: N `noop` tasks in batches of 1,000, `--concurrency` requests in flight;
 *      submit rate, end-to-end completion rate (first submit → all SUCCEEDED, read from /metrics
 *      every `--poll-ms`), dispatch lag of a sample (GET started_at − due_at), peak RSS.
 *   b. paced: single-task submissions at `--rate`/s for `--paced-seconds` s, sent at their slot
 *      times (one send burst per 10 ms tick); dispatch-lag distribution of those tasks.
 *   c. scheduled: `--scheduled-count` tasks all scheduled at now + `--scheduled-delay-ms`;
 *      how late they started relative to scheduled_at, and whether any started early.
 *
 * Usage: npm run build && node dist/load-tests/bench-throughput.js [--tasks 50000] [--help]
 *
 * Everything is bounded by `--timeout` (seconds); the service is stopped (SIGTERM, SIGKILL after
 * 10 s, then any surviving worker process it forked) and the temp dir removed in all cases.
 * Speed is reported, never asserted (DESIGN §13): the exit code is 0 when every scenario ran to
 * the end, 1 when one failed, 2 on bad arguments.
 *
 * This file is only the entry point; the harness lives in load-tests/bench/ (flags in
 * cli-options.ts, the service process in service-process.ts, the scenarios in scenarios/, the
 * JSON and the table in report.ts, the run from start to end in run.ts, on the run control
 * shared by every harness: flags.ts, run-harness.ts, service-run.ts, results-file.ts).
 */
import { main } from './bench/run';
import { exitWith } from './bench/run-harness';

exitWith('bench-throughput', main());
