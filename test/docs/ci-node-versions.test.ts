import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from '../helpers/temp-dir';
import { sqliteDriverPackage } from '../../src/storage/sqlite/driver';

const root = path.resolve(__dirname, '..', '..', '..');
const script = path.join(root, '.ci', 'node-versions.sh');

/** Runs `bash -c` with .ci/node-versions.sh sourced, in `cwd`, with a private cache. */
function withScript(cwd: string, commands: string): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync('bash', ['-c', `source ${JSON.stringify(script)}; ${commands}`], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, CI_NODE_CACHE: path.join(cwd, 'cache') },
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** The Node versions CI runs the suite on, beside the machine's own, and what package.json promises. */
describe('CI on several Node versions (.ci/run, .ci/node-versions.sh)', () => {
  const dirs: Array<{ remove(): void }> = [];
  afterEach(() => dirs.splice(0).forEach((d) => d.remove()));

  it('.ci/run runs the suite on a Node 22 and a Node 24 that engines allows, and sources the script', () => {
    const run = fs.readFileSync(path.join(root, '.ci', 'run'), 'utf8');
    const versions = /CI_NODE_EXTRA_VERSIONS="\$\{CI_NODE_EXTRA_VERSIONS:-([^}]*)\}"/.exec(run)?.[1].split(' ') ?? [];
    expect(versions.map((v) => v.split('.')[0])).to.deep.equal(['22', '24']);
    expect(run).to.match(/^source \.ci\/node-versions\.sh$/m);
    expect(run).to.match(/ci_node_suite "\$version"/);
    const engines = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).engines.node as string;
    expect(engines).to.equal('20.x || 22.x || 24.x');
    const [, minor] = versions[1].split('.').map(Number);
    expect(minor, 'a Node 24 whose headers abort better-sqlite3 12: the one users get now').to.be.at.least(19);
  });

  it('loads better-sqlite3 13 (better-sqlite3-napi) from Node 22 on, as the store does, and 12 on Node 20', () => {
    const out = withScript(root, 'for v in 20.20.2 22.23.3 24.21.0 26.1.0; do ci_node_sqlite_driver $v; done');
    expect(out.stdout.trim().split('\n')).to.deep.equal([
      'better-sqlite3',
      'better-sqlite3-napi',
      'better-sqlite3-napi',
      'better-sqlite3-napi',
    ]);
    for (const v of ['20.20.2', '22.23.3', '24.21.0', '26.1.0'])
      expect(sqliteDriverPackage(v), v).to.equal(v.startsWith('20.') ? 'better-sqlite3' : 'better-sqlite3-napi');
  });

  it('refuses to swap the addon of a node_modules that is a symlink (shared with other checkouts)', () => {
    const dir = tempDir('ci-node-');
    dirs.push(dir);
    fs.mkdirSync(path.join(dir.path, 'real'));
    fs.symlinkSync(path.join(dir.path, 'real'), path.join(dir.path, 'node_modules'));
    const out = withScript(dir.path, 'ci_node_use_binding /dev/null');
    expect(out.status).to.equal(1);
    expect(out.stderr).to.contain('node_modules is a symlink');
  });

  it('refuses headers whose node::ObjectWrap removes cleanup hooks (Node >= 24.19) for better-sqlite3 12, before compiling', () => {
    const dir = tempDir('ci-node-');
    dirs.push(dir);
    fs.mkdirSync(path.join(dir.path, 'node_modules', 'better-sqlite3'), { recursive: true });
    fs.writeFileSync(path.join(dir.path, 'node_modules', 'better-sqlite3', 'package.json'), '{"version": "12.11.1"}');
    const home = path.join(dir.path, 'node-home');
    fs.mkdirSync(path.join(home, 'include', 'node'), { recursive: true });
    fs.writeFileSync(
      path.join(home, 'include', 'node', 'node_object_wrap.h'),
      'RemoveEnvironmentCleanupHook(isolate, CleanupHook, this);\n',
    );
    const out = withScript(dir.path, `ci_node_sqlite_binding 24.21.0 ${JSON.stringify(home)}`);
    expect(out.status).to.equal(1);
    expect(out.stderr).to.contain('aborts at garbage collection');
    expect(out.stdout).to.equal('');
  });

  it('ci_read_results reads passes, failures and pending of a results file', () => {
    const dir = tempDir('ci-node-');
    dirs.push(dir);
    fs.writeFileSync(path.join(dir.path, 'r.json'), JSON.stringify({ passes: 7, failures: 1, pending: 2 }));
    expect(withScript(dir.path, 'ci_read_results r.json').stdout.trim()).to.equal('7 1 2');
  });

  it('ci_summarize_results names each failed test and the slowest files for the end of the log (nothing without CI_SUMMARY_FILE)', () => {
    const dir = tempDir('ci-node-');
    dirs.push(dir);
    fs.writeFileSync(
      path.join(dir.path, 'r.json'),
      JSON.stringify({
        passes: 7,
        failures: 1,
        pending: 0,
        failed: [{ title: 'store faults a full disk', file: 'test/integration/x.test.ts', error: 'expected 500 to equal 503' }],
        files: { 'test/a.test.ts': 2_400, 'test/integration/x.test.ts': 61_000 },
      }),
    );
    expect(withScript(dir.path, 'ci_summarize_results r.json "Node 22.23.3"; echo "exit $?"').stdout).to.equal('exit 0\n');
    const out = withScript(dir.path, 'CI_SUMMARY_FILE=sum.txt; ci_summarize_results r.json "Node 22.23.3"');
    expect(out.status).to.equal(0);
    expect(fs.readFileSync(path.join(dir.path, 'sum.txt'), 'utf8')).to.equal(
      'Node 22.23.3: FAILED test/integration/x.test.ts: store faults a full disk\n    expected 500 to equal 503\n' +
        'Node 22.23.3: 63 s in test files; slowest: test/integration/x.test.ts 61 s, test/a.test.ts 2 s\n',
    );
  });

  it('.ci/run gives the other versions mocha arguments that leave out only the long fault scenarios, and prints the summary before its last line', () => {
    const run = fs.readFileSync(path.join(root, '.ci', 'run'), 'utf8');
    const args = /^CI_NODE_MOCHA_ARGS=\((.*)\)$/m.exec(run)?.[1] ?? '';
    const ignored = [...args.matchAll(/--ignore '([^']+)'/g)].map((m) => m[1]);
    expect(ignored).to.deep.equal(['dist/test/chaos/**', 'dist/test/integration/cluster-*.test.js']);
    for (const glob of ignored) {
      const dir = path.join(
        root,
        glob
          .split('/')
          .slice(0, -1)
          .join('/')
          .replace(/^dist\//, ''),
      );
      const prefix = path.basename(glob).split('*')[0];
      const files = fs.readdirSync(dir).filter((f) => f.startsWith(prefix) && f.endsWith('.test.ts'));
      expect(files.length, glob).to.be.greaterThan(0);
    }
    expect(run.indexOf('cat "$CI_SUMMARY_FILE"')).to.be.greaterThan(run.indexOf('ci_services_stop\ntrap - EXIT'));
    expect(run.indexOf('cat "$CI_SUMMARY_FILE"')).to.be.lessThan(run.lastIndexOf('echo "${passed} passed'));
  });
});
