import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { terminal, useInProcessScheduler } from '../helpers/in-process-scheduler';

/** A handler that waits `payload.ms` and returns the pid of the worker process it ran in. */
const PID_SLEEP = 'module.exports = async (p) => { await new Promise((r) => setTimeout(r, p.ms)); return { pid: process.pid }; };\n';

/** A handler that computes (blocks its process) for `payload.ms` and returns its pid. */
const CRUNCH = 'module.exports = (p) => { const end = Date.now() + p.ms; while (Date.now() < end) {} return { pid: process.pid }; };\n';

/**
 * Worker selection and worker pools on the real scheduler with forked worker processes: at low
 * load the attempts are spread over both processes (least loaded first) instead of all going to
 * the first, and a CPU-bound task type pinned to a pool of its own holds up no other task.
 */
describe('worker processes: spread and pools (real processes)', function () {
  this.timeout(60_000);

  describe('2 worker processes, 20 slow-ish tasks at a low rate', () => {
    const s = useInProcessScheduler({ workers: 2, workerConcurrency: 16, partitions: 4 }, (dir) => {
      const file = path.join(dir, 'pid-sleep.js');
      fs.writeFileSync(file, PID_SLEEP);
      return { handlers: { 'pid-sleep': file } };
    });

    it('both processes ran some of them', async () => {
      const start = Date.now() + 500;
      const acks: Array<{ task_id: string }> = [];
      for (let i = 0; i < 20; i++) {
        // Due one every 100 ms, each running 250 ms: two or three run at once.
        const scheduled_at = new Date(start + i * 100).toISOString();
        acks.push(await s.scheduler.service.submit({ task_type: 'pid-sleep', payload: { ms: 250 }, scheduled_at }));
      }
      const done = await Promise.all(acks.map((a) => s.waitFor(a.task_id, terminal, 30_000)));
      expect(done.map((t) => t.status)).to.deep.equal(Array(20).fill('SUCCEEDED'));

      const workers = (await s.scheduler.runtime.router.dispatcher!.ask('stats', null)).workers;
      const perPid = new Map<number, number>();
      for (const t of done) perPid.set(t.result.pid, (perPid.get(t.result.pid) ?? 0) + 1);
      const perWorker = new Map<string, number>();
      for (const t of done) perWorker.set(t.worker_id, (perWorker.get(t.worker_id) ?? 0) + 1);
      const counts = `by pid ${JSON.stringify([...perPid])}, by worker ${JSON.stringify([...perWorker])}`;
      expect([...perPid.keys()].sort(), counts).to.deep.equal(workers.map((w) => w.pid).sort());
      // Least loaded first: close to 10 and 10; generous bounds for a loaded machine.
      for (const n of perPid.values()) expect(n, counts).to.be.at.least(5);
      expect([...perWorker.keys()].sort(), counts).to.deep.equal(['worker-1', 'worker-2']);
    });
  });

  describe('a CPU-bound type pinned to a pool of one process', () => {
    const s = useInProcessScheduler(
      {
        workers: 1,
        workerConcurrency: 4,
        partitions: 4,
        workerPools: [{ name: 'cpu', taskTypes: ['crunch'], processes: 1, concurrency: 1 }],
      },
      (dir) => {
        const file = path.join(dir, 'crunch.js');
        fs.writeFileSync(file, CRUNCH);
        return { handlers: { crunch: file } };
      },
    );

    it('an ordinary task submitted while the pinned pool computes starts promptly; the pool runs one at a time', async () => {
      const busy = await s.scheduler.service.submit({ task_type: 'crunch', payload: { ms: 4000 } });
      const queued = await s.scheduler.service.submit({ task_type: 'crunch', payload: { ms: 100 } });
      await s.waitFor(busy.task_id, (t) => t.status === 'RUNNING');

      const echo = await s.scheduler.service.submit({ task_type: 'echo', payload: { hi: 1 } });
      const e = await s.waitFor(echo.task_id, terminal, 10_000);
      expect(e).to.include({ status: 'SUCCEEDED', worker_id: 'worker-1' });
      expect(Date.parse(e.started_at) - Date.parse(e.created_at), 'echo start lag (ms)').to.be.below(2000);
      // While it ran, the pinned pool was still busy with its one slot: the second crunch waited.
      expect((await s.scheduler.service.get(busy.task_id)).status).to.equal('RUNNING');
      expect((await s.scheduler.service.get(queued.task_id)).status).to.not.equal('RUNNING');

      const [b, q] = await Promise.all([s.waitFor(busy.task_id, terminal, 30_000), s.waitFor(queued.task_id, terminal, 30_000)]);
      expect(b).to.include({ status: 'SUCCEEDED', worker_id: 'cpu-worker-1', attempts: 1 });
      expect(q).to.include({ status: 'SUCCEEDED', worker_id: 'cpu-worker-1', attempts: 1 });
      expect(Date.parse(q.started_at)).to.be.at.least(Date.parse(b.completed_at));
      const stats = await s.scheduler.runtime.router.dispatcher!.ask('stats', null);
      expect(stats.workers.map((w) => `${w.pool}/${w.id}`)).to.deep.equal(['default/worker-1', 'cpu/cpu-worker-1']);
      expect(b.result.pid).to.equal(stats.workers[1].pid);
    });
  });
});
