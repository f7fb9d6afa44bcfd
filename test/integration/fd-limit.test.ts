import { expect } from 'chai';
import fs from 'node:fs';
import { spawnSync } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { http } from '../helpers/http';
import { terminal } from '../helpers/in-process-scheduler';
import { serviceEnv, startServiceProcess, ServiceProcess } from '../helpers/service-process';
import { tempDir } from '../helpers/temp-dir';

/** The open-files limit the service runs under here (`prlimit`): a few dozen above what it opens at start. */
const FD_LIMIT = 128;

/** Resolves once `check` answers true, polling every 50 ms (an event in another process), or throws after `ms`. */
async function until(what: string, check: () => boolean, svc: ServiceProcess, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what}: not seen in ${ms} ms\n${svc.output().slice(-4000)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * A worker process that dies while the service has every file descriptor of its limit in use: its
 * respawn cannot fork (EMFILE). comedy 2.1.7 let the fork's `error` event go unheard, which ended
 * the service (found by a fault run with `ulimit -n 64` and 60 long polls). Now the respawn is
 * retried, logged, and succeeds once descriptors are free again. The service warns as it nears
 * the limit, and says when it is back under it (src/observability/open-files-watch.ts). A stop at
 * the limit is still graceful, and a limit too low to start is refused in one line.
 */
describe('the open-files limit', function () {
  this.timeout(90_000);
  const dir = tempDir();
  const sockets: net.Socket[] = [];
  let svc: ServiceProcess | null = null;

  afterEach(async () => {
    for (const s of sockets.splice(0)) s.destroy();
    await svc?.stop();
    svc = null;
  });
  after(() => dir.remove());

  /** Starts the service under the limit with one worker, and opens idle connections until it holds every descriptor it may. */
  async function atTheLimit(): Promise<{ s: ServiceProcess }> {
    const s = await startServiceProcess(dir.path, { WORKERS: '1', WORKER_PING_MS: '200', LOG_LEVEL: 'info' }, 20_000, {
      prefix: ['prlimit', `--nofile=${FD_LIMIT}:${FD_LIMIT}`, '--'],
    });
    svc = s;
    const pid = s.child.pid as number;
    const openFds = () => fs.readdirSync(`/proc/${pid}/fd`).length;
    const port = Number(new URL(s.url).port);
    for (let i = 0; i < FD_LIMIT; i++) {
      const sock = net.connect(port, '127.0.0.1');
      sock.on('error', () => undefined);
      sockets.push(sock);
    }
    await until('descriptors used up', () => openFds() >= FD_LIMIT - 1, s);
    return { s };
  }

  it('does not end the service; the worker comes back once descriptors are free, and runs tasks', async () => {
    const { s } = await atTheLimit();
    await until('the open-files warning', () => s.output().includes('open files near their limit'), s);
    const [worker] = s.workerPids();
    process.kill(worker, 'SIGKILL');
    await until('a failed respawn logged', () => s.output().includes('worker process could not be started again'), s);
    expect(s.child.exitCode, s.output().slice(-4000)).to.equal(null);
    expect(s.output()).to.include('EMFILE');
    for (const sock of sockets.splice(0)) sock.destroy();
    await until('the worker respawned', () => s.output().includes('worker process restarted'), s);
    await until('the open-files warning over', () => s.output().includes('open files back under their limit'), s);
    const submitted = await http('POST', `${s.url}/api/v1/tasks`, { task_type: 'echo', payload: { after: 'respawn' } });
    expect(submitted.status).to.equal(202);
    const deadline = Date.now() + 30_000;
    let task: Record<string, unknown> = {};
    while (!terminal(task) && Date.now() < deadline) {
      task = (await http('GET', `${s.url}/api/v1/tasks/${submitted.body.task_id}`)).body;
      if (!terminal(task)) await new Promise((r) => setTimeout(r, 50));
    }
    expect(task.status).to.equal('SUCCEEDED');
  });

  it('a stop at the limit is still graceful: "stopped", exit 0 (the liveness folder was removed by a listing that needs a descriptor)', async () => {
    const { s } = await atTheLimit();
    await s.stop();
    expect(s.output(), s.output().slice(-4000)).to.include('"msg":"stopped"');
    expect(s.child.exitCode, s.output().slice(-4000)).to.equal(0);
    expect(s.output()).to.not.include('EMFILE');
  });

  it('a limit under what start-up needs: exit 78 with one line naming the limit and the fix, and no store made', () => {
    const main = path.resolve(__dirname, '..', '..', 'src', 'main.js');
    const r = spawnSync('prlimit', ['--nofile=40:40', '--', process.execPath, main], {
      env: serviceEnv(dir.path, 1, { WORKERS: '1', LOG_LEVEL: 'info' }),
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(r.status, r.stderr + r.stdout).to.equal(78);
    expect(r.stderr).to.match(
      /^open files limit 40 is below the \d+ this service needs to start with 1 worker process\(es\) .*raise it \(ulimit -n/,
    );
    expect(r.stderr.trim().split('\n')).to.have.length(1);
    expect(r.stdout, 'no log line: nothing was opened').to.equal('');
  });
});
