/**
 * Paths of the bench harness: the project root, the service entry point it starts and the
 * default results folder. Compiled to dist/load-tests/bench/, hence three levels up to the root.
 */
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '..', '..', '..');
export const SERVICE_ENTRY = path.join(ROOT, 'dist', 'src', 'main.js');
export const RESULTS_DIR = path.join(ROOT, 'load-tests', 'results');
