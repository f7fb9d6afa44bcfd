/**
 * Paths of the bench harness: the project root, the service entry point it starts and the
 * default results folder. Compiled to dist/load-tests/bench/, hence three levels up to the root.
 */
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '..', '..', '..');
export const SERVICE_ENTRY = path.join(ROOT, 'dist', 'src', 'main.js');
export const RESULTS_DIR = path.join(ROOT, 'load-tests', 'results');

/**
 * The Node flags `npm start` runs the service with (package.json, checked by a unit test): a
 * 64 MiB young generation, so a flood of short-lived task objects is collected by scavenges
 * instead of being promoted into mark-compact pauses (measured: main-thread stalls of ~150 ms
 * during a 100,000-task burst disappeared; another tenant's p99 dispatch lag 112 → ~80 ms).
 */
export const SERVICE_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=64'];
