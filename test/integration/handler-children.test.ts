import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { http, waitForTask } from '../helpers/http';
import { isAlive } from '../helpers/process-files';
import { startServiceProcess } from '../helpers/service-process';
import { tempDir } from '../helpers/temp-dir';

/**
 * What a handler started itself (a `child_process`) does not outlive its worker process when the
 * service goes away: otherwise it would go on beside the attempt's retry after the restart. The
 * handler here waits on a promise with its event loop free, so its worker leaves through the IPC
 * channel's close (not the liveness thread's check, which covers a blocked loop:
 * test/unit/liveness-listener.test.ts).
 */
describe('processes a handler started end with its worker when the service goes away', function () {
  this.timeout(60_000);
  if (process.platform !== 'linux') return; // process trees read from /proc
  let dir: ReturnType<typeof tempDir>;
  let config: string;
  let pids: number[] = [];
  beforeEach(() => {
    dir = tempDir();
    // Starts a `sleep`, writes its pid, then waits forever, deaf to its abort signal.
    const handler = path.join(dir.path, 'spawn-wait.js');
    fs.writeFileSync(
      handler,
      "const { spawn } = require('node:child_process'); const fs = require('node:fs');\n" +
        "module.exports = (p) => { const c = spawn('sleep', ['60'], { stdio: 'ignore' }); fs.writeFileSync(p.file, String(c.pid)); return new Promise(() => undefined); };\n",
    );
    config = path.join(dir.path, 'scheduler.json');
    fs.writeFileSync(config, JSON.stringify({ handlers: { spawn_wait: handler }, shutdownGraceMs: 300 }));
  });
  afterEach(() => {
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    pids = [];
    dir.remove();
  });

  /** Starts the handler in a real service and returns the service and the `sleep`'s pid. */
  const startHandler = async () => {
    const svc = await startServiceProcess(dir.path, { SCHEDULER_CONFIG: config, WORKERS: '1' });
    pids.push(...svc.workerPids());
    const file = path.join(dir.path, 'child.pid');
    const { body } = await http('POST', `${svc.url}/api/v1/tasks`, { task_type: 'spawn_wait', payload: { file } });
    await waitForTask(svc.url, body.task_id, (t) => t.status === 'RUNNING');
    while (!fs.existsSync(file) || fs.readFileSync(file, 'utf8') === '') await new Promise((r) => setTimeout(r, 20)); // waiting for the handler's write
    const child = Number(fs.readFileSync(file, 'utf8'));
    pids.push(child);
    expect(isAlive(child)).to.equal(true);
    return { svc, child };
  };
  /** Waits (polling their state, bounded at 5 s) until none of `pids` runs. */
  const gone = async (list: number[]) => {
    const deadline = Date.now() + 5000;
    while (list.some(isAlive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    return list.filter(isAlive);
  };

  it('SIGKILL of the service: the worker leaves on its closed channel and kills the sleep first', async () => {
    const { svc, child } = await startHandler();
    const workers = svc.workerPids();
    await svc.kill9();
    expect(await gone(workers), 'worker processes 5 s after the service died').to.deep.equal([]);
    expect(await gone([child]), "the handler's child 5 s after the service died").to.deep.equal([]);
  });

  it('a graceful stop whose grace ends with the handler still running takes the sleep with it', async () => {
    const { svc, child } = await startHandler();
    await svc.stop();
    expect(svc.child.exitCode, svc.output()).to.equal(0);
    expect(await gone([child]), "the handler's child 5 s after the stop").to.deep.equal([]);
  });
});
