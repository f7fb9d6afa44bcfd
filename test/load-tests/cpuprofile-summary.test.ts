import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from '../helpers/temp-dir';

const SCRIPT = path.resolve(__dirname, '..', '..', 'load-tests', 'cpuprofile-summary.js');

/** Runs the summary tool; its stderr, stdout and exit code. */
function run(...args: string[]) {
  const r = spawnSync(process.execPath, [SCRIPT, ...args], { encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('cpuprofile-summary: bad command lines get one line and exit code 2, no stack', () => {
  const dir = tempDir();
  after(() => dir.remove());

  it('an unknown flag, no profile, a missing file, a bad --top and a file that is not a profile', () => {
    const notAProfile = path.join(dir.path, 'x.cpuprofile');
    fs.writeFileSync(notAProfile, 'not json');
    fs.mkdirSync(path.join(dir.path, 'empty'));
    const cases: Array<[string[], RegExp]> = [
      [['--bogus'], /Unknown option '--bogus'/],
      [[], /no profile given/],
      [[path.join(dir.path, 'nope')], /no such file or folder/],
      [['--top', 'x', dir.path], /--top must be a whole number/],
      [[path.join(dir.path, 'empty')], /no \.cpuprofile files in this folder/],
      [[notAProfile], /not a readable \.cpuprofile/],
    ];
    for (const [args, message] of cases) {
      const r = run(...args);
      expect(r.status, args.join(' ')).to.equal(2);
      expect(r.stderr)
        .to.match(message)
        .and.match(/^cpuprofile-summary: .*\nusage: /)
        .and.not.match(/\n\s+at /);
    }
  });

  it('summarises a profile, and --help prints the usage', () => {
    const profile = path.join(dir.path, 'p.cpuprofile');
    const root = { id: 1, callFrame: { functionName: '(root)', url: '', lineNumber: -1, columnNumber: -1 }, children: [2] };
    const work = { id: 2, callFrame: { functionName: 'work', url: 'file:///a.js', lineNumber: 3, columnNumber: 0 } };
    fs.writeFileSync(
      profile,
      JSON.stringify({ nodes: [root, work], startTime: 0, endTime: 3000, samples: [2, 2, 2], timeDeltas: [0, 1000, 1000] }),
    );
    const r = run('--top', '3', profile);
    expect(r.status).to.equal(0);
    expect(r.stdout).to.match(/self time by function[\s\S]*work/);
    expect(run('--help')).to.include({ status: 0, stdout: 'usage: cpuprofile-summary <file.cpuprofile | dir> [--top 25] [--json]\n' });
  });
});
