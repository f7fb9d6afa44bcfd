/**
 * SQLite-specific: the writer thread starts with its V8 young generation at the process's bound
 * (src/storage/sqlite/young-generation.ts), and the threads made after it do not. The flags are
 * process-wide, so the store runs in a child process started with the service's heap flags
 * (`npm start`); mocha's own process is left as it is.
 */
import { expect } from 'chai';
import { execFile, spawn } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { semiSpaceFlags } from '../../src/storage/sqlite/young-generation';

const MiB = 2 ** 20;

/** Opens a store in a child with `nodeFlags`, reports the writer's, a later thread's and the main thread's new space. */
function measure(nodeFlags: string[]): Promise<{ writer: number; later: number; main: number }> {
  const src = path.resolve(__dirname, '..', '..', 'src');
  const script = `
    const fs = require('node:fs'), os = require('node:os'), path = require('node:path'), v8 = require('node:v8');
    const { Worker } = require('node:worker_threads');
    const { SqliteStore } = require(${JSON.stringify(path.join(src, 'storage', 'sqlite', 'sqlite-store.js'))});
    const newSpace = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
    (async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'young-generation-'));
      const store = new SqliteStore(path.join(dir, 'scheduler.db'));
      await store.open(4);
      const stats = await store.commitStats();
      const w = new Worker("require('node:worker_threads').parentPort.postMessage(require('node:v8').getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size)", { eval: true });
      const later = await new Promise((resolve) => w.once('message', resolve));
      await w.terminate();
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
      process.stdout.write(JSON.stringify({ writer: stats.newSpaceBytes, later, main: newSpace() }));
    })().catch((err) => { console.error(err); process.exit(1); });`;
  return new Promise((resolve, reject) => {
    // Without NODE_OPTIONS: the child's flags are only those given here.
    const env = { ...process.env };
    delete env.NODE_OPTIONS;
    const child = spawn(process.execPath, [...nodeFlags, '-e', script], { stdio: ['ignore', 'pipe', 'pipe'], env });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`child exited ${code}: ${err}`))));
  });
}

describe('SQLite writer thread: young generation at the bound from the start', () => {
  it('reads the semi-space flags as V8 does: dashes or underscores, =N or a separate N, the last one wins', () => {
    expect(semiSpaceFlags(['--max-semi-space-size=64', '--min-semi-space-size=16', '--initial-old-space-size=256'])).to.deep.equal({
      minMiB: 16,
      maxMiB: 64,
    });
    expect(semiSpaceFlags(['--max_semi_space_size', '32', '--max-semi-space-size=48'])).to.deep.equal({ minMiB: null, maxMiB: 48 });
    expect(semiSpaceFlags(['--inspect', 'app.js'])).to.deep.equal({ minMiB: null, maxMiB: null });
    expect(semiSpaceFlags(['--max-semi-space-size=', '--min-semi-space-size=x'])).to.deep.equal({ minMiB: null, maxMiB: null });
  });

  it('takes the command line over NODE_OPTIONS, as Node does', async () => {
    const youngGeneration = path.resolve(__dirname, '..', '..', 'src', 'storage', 'sqlite', 'young-generation.js');
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        '--max-semi-space-size=64',
        '-e',
        `const y = require(${JSON.stringify(youngGeneration)}); process.stdout.write(JSON.stringify(y.semiSpaceFlags(y.processV8Args())))`,
      ],
      { env: { ...process.env, NODE_OPTIONS: '--max-semi-space-size=32' } },
    );
    expect(JSON.parse(stdout)).to.deep.equal({ minMiB: null, maxMiB: 64 });
  });

  it("with the service's flags: the writer starts at 64 MiB, a thread made after the store opened at 16, the main thread's is not changed", async function () {
    this.timeout(30_000);
    const r = await measure(['--max-semi-space-size=64', '--min-semi-space-size=16']);
    expect(r.writer / MiB, 'writer').to.be.at.least(64);
    expect(r.later / MiB, 'a thread made after the store opened').to.equal(16);
    expect(r.main / MiB, 'main thread').to.be.below(64);
  });

  it("without an explicit bound nothing is changed: the writer starts at V8's own small size and grows as it needs", async function () {
    this.timeout(30_000);
    const r = await measure([]);
    // Raised, it would start at V8's default bound (16 MiB semi-spaces on 64-bit); V8 starts at 1-2 MiB.
    expect(r.writer / MiB).to.be.below(16);
  });
});
