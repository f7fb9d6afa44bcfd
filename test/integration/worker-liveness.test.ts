import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { InProcessScheduler, terminal, useInProcessScheduler } from '../helpers/in-process-scheduler';

/** Polls `check` every 20 ms until it holds (bounded): waiting for a state, not for time. */
async function until(check: () => Promise<boolean> | boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not reached within ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Waits until every worker process of the scheduler is up (a killed one respawned), so none is closed mid-respawn. */
async function workersUp(s: InProcessScheduler): Promise<void> {
  const dispatcher = s.scheduler.runtime.router.dispatcher!;
  await until(async () => (await dispatcher.ask('stats', null)).workers.every((w) => w.pid > 0), 30_000, 'every worker process up');
}

/** Whether a process with this pid exists. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Worker processes, real ones: liveness from a thread beside the handlers' loop, kills that stop
 * the work, and who pays for a kill.
 */
describe('worker liveness, kills and who pays for them', function () {
  this.timeout(90_000);

  describe('a runaway handler beside 200 echo tasks on 2 worker processes', () => {
    // Pings every 2 s: the runaway's process is killed (1 s timeout + 0.5 s grace) before a ping
    // could go unanswered, so echo tasks are sent to it and stuck behind it, as this test means.
    const s = useInProcessScheduler({ workers: 2, workerConcurrency: 8, partitions: 4, workerPingMs: 2000, timeoutGraceMs: 500 }, (dir) => {
      const spin = path.join(dir, 'spin.js');
      fs.writeFileSync(spin, 'module.exports = () => { for (;;) {} };\n');
      return { handlers: { spin } };
    });

    it('every echo task SUCCEEDED without spending retries (its killed attempts are worker_recycled); the runaway is charged and DEAD', async () => {
      const { service } = s.scheduler;
      const runaway = await service.submit({ task_type: 'spin', timeout_seconds: 1, max_retries: 1, retry_delay_seconds: 0 });
      await s.waitFor(runaway.task_id, (t) => t.status === 'RUNNING');
      // No retries at all: a charged attempt would make any of them DEAD.
      const echoes = await Promise.all(
        Array.from({ length: 200 }, (_, i) => service.submit({ task_type: 'echo', payload: i, max_retries: 0 })),
      );
      let recycled = 0;
      for (const e of echoes) {
        const t = await s.waitFor(e.task_id, terminal, 60_000);
        expect(t.status, JSON.stringify(t)).to.equal('SUCCEEDED');
        for (const h of t.attempt_history.slice(0, -1)) expect(h.error.type, JSON.stringify(t)).to.equal('worker_recycled');
        if (t.attempts > 1) recycled++;
      }
      const r = await s.waitFor(runaway.task_id, terminal, 30_000);
      expect(r).to.include({ status: 'DEAD', attempts: 2 });
      expect(r.error.type).to.equal('timeout');
      expect(r.attempt_history[0].error.type).to.equal('timeout');
      // The runaway's process had free slots, so echo tasks were sent to it and stuck behind it.
      expect(recycled).to.be.above(0);
      await workersUp(s);
    });
  });

  describe('a handler holding its process past a ping, beside echo tasks with 1 s timeouts', () => {
    const s = useInProcessScheduler({ workers: 2, workerConcurrency: 8, partitions: 4, workerPingMs: 200, timeoutGraceMs: 500 }, (dir) => {
      const spin = path.join(dir, 'spin.js');
      fs.writeFileSync(spin, 'module.exports = () => { for (;;) {} };\n');
      return { handlers: { spin } };
    });

    it('the held process gets no new attempt: every echo runs once on the other process, none charged a timeout', async () => {
      const { service } = s.scheduler;
      const dispatcher = s.scheduler.runtime.router.dispatcher!;
      const runaway = await service.submit({ task_type: 'spin', timeout_seconds: 10, max_retries: 0 });
      const running = await s.waitFor(runaway.task_id, (t) => t.status === 'RUNNING');
      const held = running.worker_id as string;
      await until(
        async () => (await dispatcher.ask('stats', null)).workers.some((w) => w.id === held && w.unanswered),
        10_000,
        `${held} marked unanswered`,
      );
      const echoes = await Promise.all(
        Array.from({ length: 50 }, (_, i) => service.submit({ task_type: 'echo', payload: i, timeout_seconds: 1, max_retries: 0 })),
      );
      for (const e of echoes) {
        const t = await s.waitFor(e.task_id, terminal, 30_000);
        expect(t, JSON.stringify(t)).to.include({ status: 'SUCCEEDED', attempts: 1 });
        expect(t.worker_id).to.not.equal(held);
      }
      await service.cancel(runaway.task_id);
      expect(await s.waitFor(runaway.task_id, terminal, 30_000)).to.include({ status: 'CANCELLED' });
      await workersUp(s);
      await until(async () => (await dispatcher.ask('stats', null)).workers.every((w) => !w.unanswered), 10_000, 'every worker answering');
    });
  });

  describe('a CPU-bound handler (8 s of computation) with leases of 1.5 s', () => {
    const s = useInProcessScheduler({ workers: 1, workerConcurrency: 4, partitions: 2, workerPingMs: 200, leaseMs: 1500 }, (dir) => {
      const burn = path.join(dir, 'burn.js');
      fs.writeFileSync(
        burn,
        [
          "const fs = require('fs');",
          'module.exports = (p) => {',
          "  fs.appendFileSync(p.log, 'started\\n');",
          '  const end = Date.now() + p.ms;',
          '  let n = 0;',
          '  while (Date.now() < end) n++;',
          '  return { burned_ms: p.ms };',
          '};',
        ].join('\n'),
      );
      return { handlers: { burn } };
    });

    it('runs once, up to its timeout: its liveness does not depend on its event loop', async () => {
      const log = path.join(s.dir, 'burn.log');
      const { task_id } = await s.scheduler.service.submit({
        task_type: 'burn',
        payload: { ms: 8000, log },
        timeout_seconds: 60,
        max_retries: 2,
        retry_delay_seconds: 0,
      });
      const t = await s.waitFor(task_id, terminal, 60_000);
      expect(t).to.include({ status: 'SUCCEEDED', attempts: 1 });
      expect(t.attempt_history.map((h: { outcome: string }) => h.outcome)).to.deep.equal(['SUCCEEDED']);
      expect(fs.readFileSync(log, 'utf8')).to.equal('started\n');
    });
  });

  describe('a cancelled handler that ignores its abort signal', () => {
    const s = useInProcessScheduler({ workers: 1, workerConcurrency: 4, partitions: 2, workerPingMs: 200, timeoutGraceMs: 500 }, (dir) => {
      const stubborn = path.join(dir, 'stubborn.js');
      fs.writeFileSync(
        stubborn,
        [
          "const fs = require('fs');",
          'module.exports = async (p) => {',
          '  await new Promise((resolve) => setTimeout(resolve, p.ms));',
          "  fs.writeFileSync(p.file, 'written');",
          "  return 'done';",
          '};',
        ].join('\n'),
      );
      return { handlers: { stubborn } };
    });

    it('is stopped after the cancel grace: its process is killed and its side effect never written; a neighbour is retried free', async () => {
      const { service } = s.scheduler;
      const dispatcher = s.scheduler.runtime.router.dispatcher!;
      const file = path.join(s.dir, 'side-effect.txt');
      const { task_id } = await service.submit({ task_type: 'stubborn', payload: { ms: 4000, file }, timeout_seconds: 60 });
      const neighbour = await service.submit({ task_type: 'sleep', payload: { ms: 2500 }, max_retries: 0 });
      await s.waitFor(task_id, (t) => t.status === 'RUNNING');
      await s.waitFor(neighbour.task_id, (t) => t.status === 'RUNNING');
      const pid = (await dispatcher.ask('stats', null)).workers[0].pid;
      await service.cancel(task_id);
      expect(await s.waitFor(task_id, terminal)).to.include({ status: 'CANCELLED', attempts: 1 });
      await until(() => !alive(pid), 10_000, `worker process ${pid} killed`);
      expect(fs.existsSync(file)).to.equal(false);
      const n = await s.waitFor(neighbour.task_id, terminal, 30_000);
      expect(n).to.include({ status: 'SUCCEEDED', attempts: 2 });
      expect(n.attempt_history[0].error.type).to.equal('worker_recycled');
      // Past the moment the handler would have written it: the process that would have is gone.
      expect(fs.existsSync(file)).to.equal(false);
      await workersUp(s);
    });
  });

  describe('a worker process frozen with SIGSTOP, leases of 1.5 s', () => {
    const s = useInProcessScheduler({ workers: 1, workerConcurrency: 4, partitions: 2, workerPingMs: 200, leaseMs: 1500 });
    let frozen = 0;
    afterEach(() => {
      if (frozen > 0 && alive(frozen)) process.kill(frozen, 'SIGKILL');
    });

    it('stops beating: its leases expire, it is killed, and its attempt is charged worker_lost and runs again', async () => {
      const dispatcher = s.scheduler.runtime.router.dispatcher!;
      const { task_id } = await s.scheduler.service.submit({
        task_type: 'sleep',
        payload: { ms: 1000 },
        max_retries: 1,
        retry_delay_seconds: 0,
      });
      await s.waitFor(task_id, (t) => t.status === 'RUNNING');
      frozen = (await dispatcher.ask('stats', null)).workers[0].pid;
      process.kill(frozen, 'SIGSTOP');
      const t = await s.waitFor(task_id, terminal, 30_000);
      expect(t).to.include({ status: 'SUCCEEDED', attempts: 2 });
      expect(t.attempt_history[0].error.type).to.equal('worker_lost');
      expect(alive(frozen)).to.equal(false);
      await workersUp(s);
    });
  });
});
