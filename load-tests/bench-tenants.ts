/**
 * Multi-tenant benchmark of the scheduler service: fairness between tenants, task-type rate
 * limits and tenant weights (issue 5). Each scenario starts the real service
 * (`node dist/src/main.js`) as a child process on a free port with a fresh temporary SQLite file
 * and a config file named by `SCHEDULER_CONFIG` (a `send_email` handler module and its start
 * limit, 100/s burst 10), waits for /readyz, runs, and stops it:
 *
 *   1. fairness: tenant B submits one `noop` task every 10 ms, first alone (baseline), then while
 *      tenant A submits 100,000 `noop` tasks due now in batches of 1,000, until A has drained.
 *      B's dispatch lag (started_at − due_at, GET of every B task) p50/p99/max against the
 *      target p99 ≤ 100 ms, and A's drain time (first A submit → all A terminal, from /metrics).
 *   2. rate_limit: 3,000 `send_email` tasks (limited to 100/s, burst 10) and 1,000 `noop` tasks
 *      submitted at once; the most send_email starts in any sliding 1 s window (≤ 110 allowed),
 *      first → last start (≈ 30 s), mean rate, and the noop drain time against noop alone.
 *   3. weights: tenants C (weight 3) and D (weight 1), 20,000 `noop` tasks each; the ratio of C's
 *      to D's starts while both had work (expected ≈ 3).
 *
 * Usage: npm run bench:tenants   (= npm run build && node dist/load-tests/bench-tenants.js)
 *        node dist/load-tests/bench-tenants.js [--scenarios fairness,rate_limit] [--help]
 *
 * Prints one JSON object to stdout, writes it to load-tests/results/tenants-latest.json, appends
 * it to load-tests/results/tenants-runs.jsonl, and prints a short table to stderr. Everything is
 * bounded by `--timeout` (seconds); each service is stopped and its temp dir removed in all cases.
 * Speed is reported, never asserted (DESIGN §13): the exit code is 0 when the run went to the end
 * (whatever the figures), 1 when a scenario failed, 2 on bad arguments.
 *
 * This file is only the entry point; the harness lives in load-tests/bench/tenants/ and reuses
 * the rest of load-tests/bench/ (service process, sampler, HTTP client, statistics).
 */
import { mainTenants } from './bench/tenants/run-tenants';
import { exitWith } from './bench/run-harness';

exitWith('bench-tenants', mainTenants());
