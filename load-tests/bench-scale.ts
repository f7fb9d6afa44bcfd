/**
 * Scale benchmark of the embedded store (issue 8): the service on an empty store and on one holding
 * 10 million SCHEDULED tasks due over the next days — start-up time, RSS, and the throughput of due
 * tasks on each, with the ratios (targets: RSS ≤ 1 GiB, throughput ≥ 90 % of the empty store's).
 *
 * Usage: npm run bench:scale   (= npm run build && node dist/load-tests/bench-scale.js)
 *        node dist/load-tests/bench-scale.js [--stored 1000000] [--store-cache DIR] [--help]
 *
 * Prints one JSON object to stdout, writes it to load-tests/results/scale-latest.json and prints a
 * short table to stderr. The harness is in load-tests/bench/scale/.
 */
import { mainScale } from './bench/scale/run-scale';
import { exitWith } from './bench/run-harness';

exitWith('bench-scale', mainScale());
