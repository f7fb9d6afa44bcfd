import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { terminal, useInProcessScheduler } from '../helpers/in-process-scheduler';
import { isAlive } from '../helpers/process-files';

/**
 * Timeouts (issue 3): a handler that ignores its abort signal in synchronous code is stopped by
 * killing its worker process after `timeoutGraceMs`; the rest of the service keeps working.
 */
describe('timeouts: a synchronous infinite loop cannot stall the service', function () {
  this.timeout(60_000);
  const s = useInProcessScheduler({ workers: 2, workerConcurrency: 4, partitions: 4, timeoutGraceMs: 500, workerPingMs: 200 }, (dir) => {
    const busy = path.join(dir, 'busy-loop.js');
    fs.writeFileSync(busy, 'module.exports = () => { for (;;) {} };\n');
    // Starts a child process (its pid written to the payload's file), then loops: the kill must take the child too.
    const spawner = path.join(dir, 'spawner.js');
    fs.writeFileSync(
      spawner,
      "const { spawn } = require('node:child_process'); const fs = require('node:fs');\n" +
        "module.exports = (p) => { const c = spawn('sleep', ['60'], { stdio: 'ignore' }); fs.writeFileSync(p.file, String(c.pid)); const end = Date.now() + 60000; while (Date.now() < end) {} };\n",
    );
    return { handlers: { busy_loop: busy, spawner } };
  });
  const waitTerminal = (id: string) => s.waitFor(id, terminal);
  /** Close only once every killed process is back (no respawn in flight while the system stops). */
  const untilWorkersBack = async () => {
    const dispatcher = s.scheduler.runtime.router.dispatcher!;
    for (let i = 0; i < 200; i++) {
      const stats = await dispatcher.ask('stats', null);
      if (stats.workers.every((w) => w.pid > 0)) break;
      await new Promise((r) => setTimeout(r, 50)); // waiting for the respawn, not for time
    }
    expect((await dispatcher.ask('stats', null)).workers.every((w) => w.pid > 0)).to.equal(true);
  };

  it('a busy-looping handler with timeout_seconds 1 ends DEAD after its retries; an echo submitted meanwhile succeeds', async () => {
    const stuck = await s.scheduler.service.submit({ task_type: 'busy_loop', timeout_seconds: 1, max_retries: 1, retry_delay_seconds: 0 });
    const echo = await s.scheduler.service.submit({ task_type: 'echo', payload: 'still here' });
    const e = await waitTerminal(echo.task_id);
    expect(e).to.include({ status: 'SUCCEEDED', result: 'still here' });
    const t = await waitTerminal(stuck.task_id);
    expect(t.status).to.equal('DEAD');
    expect(t.attempts).to.equal(2);
    const history = t.attempt_history as Array<{ outcome: string; error: { type: string } }>;
    expect(history.map((a) => a.error.type)).to.deep.equal(['timeout', 'timeout']);
    const after = await s.scheduler.service.submit({ task_type: 'echo', payload: 'after the kills' });
    expect((await waitTerminal(after.task_id)).status).to.equal('SUCCEEDED');
    await untilWorkersBack();
  });

  it('the kill of a stuck worker takes the processes its handler started with it', async () => {
    const file = path.join(s.dir, `child-${process.pid}.pid`);
    const task = await s.scheduler.service.submit({ task_type: 'spawner', payload: { file }, timeout_seconds: 1, max_retries: 0 });
    expect((await waitTerminal(task.task_id)).status).to.equal('DEAD');
    const child = Number(fs.readFileSync(file, 'utf8'));
    expect(child).to.be.above(0);
    for (let i = 0; i < 100 && isAlive(child); i++) await new Promise((r) => setTimeout(r, 20)); // waiting for the signal's delivery
    expect(isAlive(child), `the handler's child ${child} outlived its worker`).to.equal(false);
    await untilWorkersBack();
  });
});
