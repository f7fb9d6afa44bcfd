import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { terminal, useInProcessScheduler } from '../helpers/in-process-scheduler';

/**
 * Timeouts (issue 3): a handler that ignores its abort signal in synchronous code is stopped by
 * killing its worker process after `timeoutGraceMs`; the rest of the service keeps working.
 */
describe('timeouts: a synchronous infinite loop cannot stall the service', function () {
  this.timeout(60_000);
  const s = useInProcessScheduler({ workers: 2, workerConcurrency: 4, partitions: 4, timeoutGraceMs: 500, workerPingMs: 200 }, (dir) => {
    const busy = path.join(dir, 'busy-loop.js');
    fs.writeFileSync(busy, 'module.exports = () => { for (;;) {} };\n');
    return { handlers: { busy_loop: busy } };
  });
  const waitTerminal = (id: string) => s.waitFor(id, terminal);

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
    // Close only once every killed process is back (no respawn in flight while the system stops).
    const dispatcher = s.scheduler.runtime.router.dispatcher!;
    for (let i = 0; i < 200; i++) {
      const stats = await dispatcher.ask('stats', null);
      if (stats.workers.every((w) => w.pid > 0)) break;
      await new Promise((r) => setTimeout(r, 50)); // waiting for the respawn, not for time
    }
    expect((await dispatcher.ask('stats', null)).workers.every((w) => w.pid > 0)).to.equal(true);
  });
});
