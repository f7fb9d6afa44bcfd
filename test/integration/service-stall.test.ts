import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { isTerminal, waitForTask } from '../helpers/http';
import { useServiceProcess } from '../helpers/service-process';
import { tempDir } from '../helpers/temp-dir';

const LEASE_MS = 3000;
const STOPPED_MS = 5000;

/**
 * The service process itself stopped for longer than its attempts' leases (SIGSTOP, then SIGCONT:
 * a paused VM, a debugger): its workers went on running and reporting, but nothing read their
 * beats or extended a lease meanwhile. After the resume the lease sweep must not take that for
 * dead workers (it did: it killed both and recorded every attempt `worker_lost`, dropping the
 * reports of those that had finished).
 */
describe('a service process stopped past its attempts’ leases, then resumed', function () {
  this.timeout(60_000);
  const cfg = tempDir('scheduler-stall-');
  const cfgFile = path.join(cfg.path, 'config.json');
  fs.writeFileSync(cfgFile, JSON.stringify({ leaseMs: LEASE_MS }));
  const fixture = useServiceProcess({ SCHEDULER_CONFIG: cfgFile, WORKERS: '2' });
  after(() => cfg.remove());

  it('kills no worker: attempts that ended during the stop and those still running each succeed once', async () => {
    const svc = fixture.svc;
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      ids.push(await fixture.submit({ task_type: 'sleep', payload: { ms: i % 2 === 0 ? 2000 : 7000 }, max_retries: 0 }));
    }
    for (const id of ids) await waitForTask(svc.url, id, (t) => t.status === 'RUNNING');
    const pid = svc.child.pid as number;
    process.kill(pid, 'SIGSTOP');
    try {
      await new Promise((r) => setTimeout(r, STOPPED_MS)); // the fault's length: longer than a lease
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    for (const id of ids) {
      const t = await waitForTask(svc.url, id, isTerminal, 30_000, '?include=attempts');
      expect(t, JSON.stringify(t.attempt_history)).to.include({ status: 'SUCCEEDED', attempts: 1 });
    }
    expect(svc.output()).to.not.include('killing worker process');
  });
});
