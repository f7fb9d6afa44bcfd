import fs from 'node:fs';
import path from 'node:path';
import Mocha from 'mocha';

/** What a run leaves in MOCHA_RESULTS_FILE (read by `.ci/node-versions.sh`). */
interface RunResults {
  passes: number;
  failures: number;
  pending: number;
  tests: number;
  /** Each failed test or hook: its full title, its source file, the first line of its error. */
  failed: Array<{ title: string; file: string; error: string }>;
  /** Wall time (ms) of each test file's top-level suites, hooks included, keyed by source file. */
  files: Record<string, number>;
}

/** `/…/dist/test/x/y.test.js` → `test/x/y.test.ts`: the file a reader opens. */
function sourceFile(file: string | undefined): string {
  if (!file) return '?';
  return path
    .relative(process.cwd(), file)
    .replace(/^dist\//, '')
    .replace(/\.js$/, '.ts');
}

/**
 * mocha reporter: the usual spec output, plus (when MOCHA_RESULTS_FILE is set) a JSON file with
 * mocha's own counts `{passes, failures, pending, tests}`, which `.ci/run` turns into its closing
 * `N passed, N failed` line, the failed tests' titles and errors and each file's wall time, which
 * it repeats just before that line (a long log is often read from its end). A run that never
 * reaches the end leaves no file, and CI fails.
 */
class ResultsReporter extends Mocha.reporters.Spec {
  constructor(runner: Mocha.Runner, options: Mocha.MochaOptions) {
    super(runner, options);
    const out = process.env.MOCHA_RESULTS_FILE;
    if (!out) return;
    const failed: RunResults['failed'] = [];
    const files: Record<string, number> = {};
    const started = new Map<Mocha.Suite, number>();
    const { EVENT_RUN_END, EVENT_SUITE_BEGIN, EVENT_SUITE_END, EVENT_TEST_FAIL } = Mocha.Runner.constants;
    runner.on(EVENT_SUITE_BEGIN, (suite: Mocha.Suite) => {
      if (suite.parent?.root) started.set(suite, Date.now());
    });
    runner.on(EVENT_SUITE_END, (suite: Mocha.Suite) => {
      const t0 = started.get(suite);
      if (t0 === undefined) return;
      started.delete(suite);
      const file = sourceFile(suite.file);
      files[file] = (files[file] ?? 0) + (Date.now() - t0);
    });
    runner.on(EVENT_TEST_FAIL, (test: Mocha.Runnable, err: unknown) => {
      const message = err instanceof Error ? err.message : String(err);
      failed.push({ title: test.fullTitle(), file: sourceFile(test.file), error: message.split('\n', 1)[0].slice(0, 300) });
    });
    runner.once(EVENT_RUN_END, () => {
      const s = runner.stats ?? { passes: 0, failures: 0, pending: 0, tests: 0 };
      const results: RunResults = { passes: s.passes, failures: s.failures, pending: s.pending, tests: s.tests, failed, files };
      fs.writeFileSync(out, JSON.stringify(results));
    });
  }
}

export = ResultsReporter;
