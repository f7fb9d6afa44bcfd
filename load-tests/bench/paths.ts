/**
 * Paths of the bench harness: the project root, the service entry point it starts and the
 * default results folder. Compiled to dist/load-tests/bench/, hence three levels up to the root.
 */
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '..', '..', '..');
export const SERVICE_ENTRY = path.join(ROOT, 'dist', 'src', 'main.js');
export const RESULTS_DIR = path.join(ROOT, 'load-tests', 'results');

/**
 * The Node flags `npm start` runs the service with (package.json, checked by a unit test; the
 * worker processes inherit them), V8's heap sizes (docs/OPERATIONS.md, "Node flags"):
 * - a young generation of up to 64 MiB, so a flood of short-lived task objects is collected by
 *   scavenges instead of being promoted into mark-compact pauses (measured: main-thread stalls of
 *   ~150 ms during a 100,000-task burst disappeared; another tenant's p99 dispatch lag 112 →
 *   ~80 ms);
 * - from 16 MiB at start (V8 starts at 1 MiB and grows it as objects survive) and an old
 *   generation that is first collected at 256 MiB, not at V8's small initial limit: a service's
 *   first seconds of work ran several scavenges and two full mark-compacts per 20,000 tasks
 *   while its heap grew to its working size (measured, `bench-peers --systems ours`, 8 runs of
 *   each taking turns: a new service's first backlog of 20,000 drained at a median of 37,800
 *   against 32,700 tasks/s).
 */
export const SERVICE_NODE_FLAGS: readonly string[] = [
  '--max-semi-space-size=64',
  '--min-semi-space-size=16',
  '--initial-old-space-size=256',
];
