/**
 * Cron firing-accuracy benchmark for the scheduler service.
 *
 * Starts the real service (`node dist/src/main.js`) as a child process on a free port with a fresh
 * temporary SQLite file, waits for /readyz, then:
 *
 *   1. creates `--crons` (1,000) cron definitions through `POST /api/v1/cron-tasks`, each
 *      `"* * * * * *"` (every second, UTC), task_type `noop`, overlap_policy `skip`;
 *   2. lets them fire for `--seconds` (20) after the last one is created, plus `--settle-ms`;
 *   3. pauses them (`PATCH {enabled:false}`), reads every fire record back
 *      (`GET /api/v1/cron-tasks/{id}/runs`, paginated) and fetches a sample of the instances
 *      (`GET /api/v1/tasks/{id}`).
 *
 * Figures: fire lag (`recorded_at − fire_time` of the `created` records), start lag
 * (`started_at − fire_time` of the sampled instances), exactness (per cron, one record per fire
 * time of its window: missing / duplicate / off-grid fire times, outcome counts), the service's
 * CPU (% of one core) and peak RSS while firing, and the service's own cron metrics.
 * `--every-minute` runs 10,000 crons `"0 * * * * *"` over at least two minute boundaries instead.
 *
 * Usage: npm run bench:cron   (= npm run build && node dist/load-tests/bench-cron.js)
 *        node dist/load-tests/bench-cron.js [--crons 1000] [--seconds 20] [--every-minute] [--help]
 *
 * Prints one JSON object to stdout, writes it to load-tests/results/cron-latest.json, appends it
 * to load-tests/results/cron-runs.jsonl, and prints a short table to stderr. Everything is bounded
 * by `--timeout` (seconds); the service is stopped and the temp dir removed in all cases. Speed is
 * reported, never asserted (DESIGN §13): the exit code is 0 when the run went to the end (whatever
 * the figures), 1 when it failed, 2 on bad arguments.
 *
 * This file is only the entry point; the cron harness lives in load-tests/bench/cron/ and reuses
 * the rest of load-tests/bench/ (service process, sampler, HTTP client, statistics).
 */
import { mainCron } from './bench/cron/run-cron';
import { exitWith } from './bench/run-harness';

exitWith('bench-cron', mainCron());
