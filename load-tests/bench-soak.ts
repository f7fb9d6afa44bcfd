/**
 * Soak benchmark of the scheduler service on its embedded SQLite store (issue 31, must-show 5):
 * an hour of mixed load on one service, sampled, with a verdict on leaks and losses.
 *
 * One service (`node dist/src/main.js`, fresh temp SQLite file, a config file registering the
 * side-effect handler for the soak's task types) runs:
 *   - first, unless --rate is given, a run-now burst (--peak-tasks) that measures the peak; the
 *     steady rate is half of it;
 *   - for --duration (60 min): tenant S's steady run-now submissions at that rate, paced in
 *     batches every --batch-ms, with a --retry-fraction share (tenant R) failing its first attempt
 *     and retried after 1 s; --crons cron definitions every --cron-every seconds; a small DAG
 *     workflow every --workflow-every seconds; tenant F's flood of --flood-tasks at once every
 *     --flood-every minutes (mid-period), while S keeps submitting;
 *   - every --sample-interval: RSS of the main process and of the workers (/proc), the main
 *     thread's longest event-loop delay since the previous sample (/metrics), WAL and store file
 *     sizes, task counts by state, and the dispatch lag (started_at − due_at) of a random sample
 *     of S's tasks read back;
 *   - then the crons are paused and every acknowledged task must end SUCCEEDED, with exactly one
 *     side-effect line (nothing lost, nothing run twice).
 * Verdict (soak/soak-verdict.ts): main and workers' RSS, the WAL size and S's p99 dispatch lag
 * outside the floods, over the last window against the first window after --warmup, within
 * --tolerance (10 %); plus the completeness check.
 *
 * Usage: npm run bench:soak   (= npm run build && node dist/load-tests/bench-soak.js)
 *        node dist/load-tests/bench-soak.js --duration 6 --warmup 2 --flood-every 2 [--help]
 *
 * Prints one JSON object to stdout, writes it to load-tests/results/soak-latest.json (or --out),
 * appends it to load-tests/results/soak-runs.jsonl, and prints a short table to stderr. The exit
 * code is 0 when the run went to the end (whatever the verdict: see `soak.pass`), 1 on a harness
 * error, 2 on bad flags.
 */
import { exitWith } from './bench/run-harness';
import { mainSoak } from './bench/soak/run-soak';

exitWith('bench-soak', mainSoak());
