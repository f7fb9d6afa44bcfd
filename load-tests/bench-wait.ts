/**
 * `?wait=` benchmark: how soon a long poll on a task answers after the task ends.
 *
 * Starts the real service (`node dist/src/main.js`) as a child process on a free port with a fresh
 * temporary SQLite file, waits for /readyz, submits `--tasks` (1,000) short `sleep` tasks, holds
 * one `GET /api/v1/tasks/{id}?wait=30` per task while they run, and reports the delay between each
 * task's end (`completed_at`, the service's clock, the same machine's) and its answer's arrival:
 * p50/p99/max (goal: p99 ≤ 50 ms). Then a few waits on tasks an hour ahead time out, and their
 * lateness past the requested timeout is reported.
 *
 * Usage: npm run bench:wait   (= npm run build && node dist/load-tests/bench-wait.js)
 *        node dist/load-tests/bench-wait.js [--tasks 1000] [--timeouts 5] [--help]
 *
 * Prints one JSON object to stdout, writes it to load-tests/results/wait-latest.json, appends it to
 * load-tests/results/wait-runs.jsonl, and prints a short table to stderr. Speed is reported, never
 * asserted: the exit code is 0 when the run went to the end, 1 when it failed, 2 on bad arguments.
 */
import { mainWait } from './bench/wait/run-wait';
import { exitWith } from './bench/run-harness';

exitWith('bench-wait', mainWait());
