import fs from 'node:fs';
import Mocha from 'mocha';

/**
 * mocha reporter: the usual spec output, plus (when MOCHA_RESULTS_FILE is set) a JSON file with
 * mocha's own counts `{passes, failures, pending, tests}`, which `.ci/run` turns into its closing
 * `N passed, N failed` line. A run that never reaches the end leaves no file, and CI fails.
 */
class ResultsReporter extends Mocha.reporters.Spec {
  constructor(runner: Mocha.Runner, options: Mocha.MochaOptions) {
    super(runner, options);
    const file = process.env.MOCHA_RESULTS_FILE;
    if (!file) return;
    runner.once(Mocha.Runner.constants.EVENT_RUN_END, () => {
      const s = runner.stats ?? { passes: 0, failures: 0, pending: 0, tests: 0 };
      fs.writeFileSync(file, JSON.stringify({ passes: s.passes, failures: s.failures, pending: s.pending, tests: s.tests }));
    });
  }
}

export = ResultsReporter;
