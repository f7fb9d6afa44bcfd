import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { npmStart, NpmStart } from '../../load-tests/bench/npm-start';
import { freePort, serviceEnv } from '../helpers/service-process';
import { tempDir } from '../helpers/temp-dir';

const root = path.resolve(__dirname, '..', '..', '..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };

/** A tiny service for the throw-away project: answers 200 on /readyz, exits on SIGTERM. */
const TINY_MAIN = `import http from 'node:http';
const server = http.createServer((req, res) => {
  res.statusCode = req.url === '/readyz' ? 200 : 404;
  res.end();
});
server.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => server.close());
`;

/**
 * A throw-away project with this package's own build, prestart and start scripts, bin/ensure-built.js,
 * tsconfig files and node_modules, and a two-file src/ (one of them under src/sdk/ for the declarations step): what `npm start` decides is checked on a
 * build of seconds, without touching this checkout's dist/ (the suite runs from it).
 */
function makeProject(dir: string): void {
  const { build, prestart, start } = pkg.scripts;
  fs.writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify({ name: 'start-check', private: true, scripts: { build, prestart, start } }, null, 2),
  );
  fs.mkdirSync(path.join(dir, 'bin'));
  fs.copyFileSync(path.join(root, 'bin', 'ensure-built.js'), path.join(dir, 'bin', 'ensure-built.js'));
  fs.copyFileSync(path.join(root, 'tsconfig.json'), path.join(dir, 'tsconfig.json'));
  fs.copyFileSync(path.join(root, 'tsconfig.sdk.json'), path.join(dir, 'tsconfig.sdk.json'));
  fs.mkdirSync(path.join(dir, 'load-tests', 'k6'), { recursive: true });
  fs.copyFileSync(path.join(root, 'load-tests', 'k6', 'tsconfig.json'), path.join(dir, 'load-tests', 'k6', 'tsconfig.json'));
  fs.writeFileSync(path.join(dir, 'load-tests', 'k6', 'script.ts'), 'export default function (): void {}\n');
  fs.mkdirSync(path.join(dir, 'src'));
  fs.writeFileSync(path.join(dir, 'src', 'main.ts'), TINY_MAIN);
  fs.mkdirSync(path.join(dir, 'src', 'sdk'));
  fs.writeFileSync(path.join(dir, 'src', 'sdk', 'index.ts'), 'export const sdk = 1;\n');
  fs.symlinkSync(fs.realpathSync(path.join(root, 'node_modules')), path.join(dir, 'node_modules'));
}

const mtime = (file: string): number => fs.statSync(file).mtimeMs;

/** `npm start` builds only when dist/ is missing or older than its sources (bin/ensure-built.js as prestart). */
describe('npm start without a rebuild', function () {
  this.timeout(180_000);
  const dirs: Array<{ path: string; remove(): void }> = [];
  let running: NpmStart | null = null;

  afterEach(async () => {
    await running?.stop();
    running = null;
    for (const d of dirs.splice(0)) d.remove();
  });

  /** Runs `npm start` in `cwd`, waits for /readyz, stops it; returns its output and the ms to ready. */
  async function startOnce(cwd: string, dataDir: string): Promise<{ output: string; ms: number }> {
    const port = await freePort();
    running = npmStart(cwd, serviceEnv(dataDir, port));
    const ms = await running.ready(`http://127.0.0.1:${port}`, 150_000);
    const output = running.output();
    await running.stop();
    running = null;
    return { output, ms };
  }

  it('package.json: prestart runs bin/ensure-built.js; the build stamps dist/ as its last step; pretest still builds', () => {
    expect(pkg.scripts.prestart).to.equal('node bin/ensure-built.js');
    expect(pkg.scripts.build).to.match(/^node bin\/ensure-built\.js --begin && /);
    expect(pkg.scripts.build).to.match(/ && node bin\/ensure-built\.js --end$/);
    expect(pkg.scripts.pretest).to.equal('npm run build');
  });

  it('builds when dist/ is missing, starts without tsc when it is fresh, rebuilds when a source is newer', async () => {
    const project = tempDir('npm-start-project-');
    const data = tempDir();
    dirs.push(project, data);
    makeProject(project.path);
    const stamp = path.join(project.path, 'dist', '.build-stamp');
    const entry = path.join(project.path, 'dist', 'src', 'main.js');

    const first = await startOnce(project.path, data.path);
    expect(first.output).to.contain('[ensure-built] rebuilding: dist/ has no completed build');
    expect(first.output).to.contain('tsc -p tsconfig.json');
    expect(fs.existsSync(stamp)).to.equal(true);

    const [stampBefore, entryBefore] = [mtime(stamp), mtime(entry)];
    const second = await startOnce(project.path, data.path);
    expect(second.output).to.contain('[ensure-built] dist/ is up to date: starting without a build');
    expect(second.output).not.to.contain('tsc -p');
    expect([mtime(stamp), mtime(entry)]).to.deep.equal([stampBefore, entryBefore]);

    // A source saved after the build started: one second newer than the stamp.
    const source = path.join(project.path, 'src', 'main.ts');
    fs.utimesSync(source, new Date(stampBefore + 1000), new Date(stampBefore + 1000));
    const third = await startOnce(project.path, data.path);
    expect(third.output).to.contain(`[ensure-built] rebuilding: ${path.join('src', 'main.ts')} is newer than the build`);
    expect(third.output).to.contain('tsc -p tsconfig.json');
    expect(mtime(entry)).to.be.greaterThan(entryBefore);
  });

  it('a build that fails leaves dist/ stale, so the next start builds again (tsc emits even on a type error)', () => {
    const project = tempDir('npm-start-project-');
    dirs.push(project);
    makeProject(project.path);
    fs.writeFileSync(path.join(project.path, 'src', 'broken.ts'), 'export const n: number = "not a number";\n');
    const npm = (args: string[]) => spawnSync('npm', args, { cwd: project.path, encoding: 'utf8' });
    expect(npm(['run', 'build']).status).to.not.equal(0);
    expect(fs.existsSync(path.join(project.path, 'dist', 'src', 'broken.js')), 'tsc emitted').to.equal(true);
    const check = spawnSync(process.execPath, ['bin/ensure-built.js', '--check'], { cwd: project.path, encoding: 'utf8' });
    expect(check.status).to.equal(1);
    expect(check.stderr).to.contain('dist/ has no completed build');
  });

  it('npm start in this checkout, built by pretest: ready without running tsc', async function () {
    const check = spawnSync(process.execPath, ['bin/ensure-built.js', '--check'], { cwd: root, encoding: 'utf8' });
    // Only a checkout edited after its build (a developer's, never CI's: pretest has just built it);
    // starting there would rebuild the dist/ this suite runs from.
    if (check.status !== 0) this.skip();
    const data = tempDir();
    dirs.push(data);
    const stamp = path.join(root, 'dist', '.build-stamp');
    const stampBefore = mtime(stamp);
    const { output, ms } = await startOnce(root, data.path);
    expect(output).to.contain('[ensure-built] dist/ is up to date: starting without a build');
    expect(output).not.to.contain('tsc -p');
    expect(mtime(stamp)).to.equal(stampBefore);
    // The bar is 3 s on a quiet machine (load-tests/bench-start.ts measures it); a shared CI
    // machine gets a generous bound (a loaded 2-core machine took 20 s just to start the service).
    expect(ms).to.be.lessThan(60_000);
  });

  it("Ctrl-C on npm start (SIGINT to its process group, so twice: the terminal's and npm's copy) stops gracefully: the running task ends, `stopped`, exit 0", async function () {
    const check = spawnSync(process.execPath, ['bin/ensure-built.js', '--check'], { cwd: root, encoding: 'utf8' });
    if (check.status !== 0) this.skip(); // as above: never rebuild the dist/ this suite runs from
    const data = tempDir();
    dirs.push(data);
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    running = npmStart(root, serviceEnv(data.path, port, { LOG_LEVEL: 'info' }));
    await running.ready(url, 150_000);
    const ack = (await (
      await fetch(`${url}/api/v1/tasks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ task_type: 'sleep', payload: { ms: 1500 } }),
      })
    ).json()) as { task_id: string };
    for (;;) {
      const t = (await (await fetch(`${url}/api/v1/tasks/${ack.task_id}`)).json()) as { status: string };
      if (t.status === 'RUNNING') break;
      await new Promise((r) => setTimeout(r, 20)); // waiting for an event (the attempt's start), not timing
    }
    const { child } = running;
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    process.kill(-(child.pid as number), 'SIGINT');
    const code = await exited;
    const output = running.output();
    running = null;
    expect(output).to.contain('"msg":"stopped"');
    expect(output).not.to.contain('second signal');
    expect(output).not.to.contain('attempts still running');
    expect(code, output.slice(-3000)).to.equal(0);
  });
});
