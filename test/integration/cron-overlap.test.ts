import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import type { OverlapPolicy } from '../../src/domain/cron/cron-definition';
import { terminal, useInProcessScheduler } from '../helpers/in-process-scheduler';

/**
 * Overlap policies on the real scheduler (actors, forked workers, system clock): an every-second
 * cron whose `sleep` instance runs longer than the period. Waits for fire records and task states
 * (events), never for a fixed time.
 */
describe('cron overlap policies with a handler longer than the period (real scheduler)', function () {
  this.timeout(60_000);
  const s = useInProcessScheduler({});

  type Run = { fire_time: string; outcome: string; reason: string | null; task_id: string | null; status: string | null };

  async function runsOf(id: string): Promise<Run[]> {
    return ((await s.scheduler.crons.runs(id, { limit: 1000 })).runs as Run[]).reverse();
  }

  /** Waits until `done(runs)` holds (polling the fire records: an event of the system). */
  async function waitForRuns(id: string, done: (runs: Run[]) => boolean, timeoutMs = 30_000): Promise<Run[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const runs = await runsOf(id);
      if (done(runs)) return runs;
      if (Date.now() > deadline) throw new Error(`cron ${id}: condition not reached; runs ${JSON.stringify(runs)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Pauses the cron and waits until all its instances are terminal; returns them in fire order. */
  async function settleInstances(id: string): Promise<Array<Record<string, any>>> {
    await s.scheduler.crons.update(id, { enabled: false });
    const runs = await runsOf(id);
    const tasks = [];
    for (const r of runs.filter((x) => x.task_id)) tasks.push(await s.waitFor(r.task_id as string, terminal));
    return tasks;
  }

  /** Half-open [started, completed) intervals never intersect. */
  function expectNoOverlap(tasks: Array<Record<string, any>>): void {
    const ran = tasks.filter((t) => t.started_at).map((t) => [Date.parse(t.started_at), Date.parse(t.completed_at)]);
    ran.sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < ran.length; i++) expect(ran[i][0], 'an instance started while another ran').to.be.at.least(ran[i - 1][1]);
  }

  const create = async (policy: OverlapPolicy, ms: number) =>
    (
      await s.scheduler.crons.create({
        name: policy,
        cron_expression: '* * * * * *',
        task_type: 'sleep',
        payload: { ms },
        overlap_policy: policy,
      })
    ).cron_id as string;

  it('skip: no second instance while one is live; those firings are kept as skipped (overlap)', async () => {
    const id = await create('skip', 2500);
    await waitForRuns(id, (runs) => runs.filter((r) => r.outcome === 'created').length >= 2 && runs.some((r) => r.reason === 'overlap'));
    const tasks = await settleInstances(id);
    const runs = await runsOf(id);
    expect(
      runs.every((r) => r.outcome === 'created' || (r.outcome === 'skipped' && r.reason === 'overlap')),
      JSON.stringify(runs),
    ).to.equal(true);
    expect(tasks.every((t) => t.status === 'SUCCEEDED')).to.equal(true);
    expectNoOverlap(tasks);
    // One record per second: no fire time lost or doubled.
    const times = runs.map((r) => Date.parse(r.fire_time));
    for (let i = 1; i < times.length; i++) expect(times[i] - times[i - 1]).to.equal(1000);
  });

  it('queue: every firing creates an instance; each waits (BLOCKED) until the previous ends, then runs in order', async () => {
    const id = await create('queue', 1200);
    const runs = await waitForRuns(id, (r) => r.length >= 4);
    expect(runs.every((r) => r.outcome === 'created')).to.equal(true);
    const tasks = await settleInstances(id);
    expect(tasks.every((t) => t.status === 'SUCCEEDED')).to.equal(true);
    expectNoOverlap(tasks);
    const starts = tasks.map((t) => Date.parse(t.started_at));
    expect([...starts].sort((a, b) => a - b)).to.deep.equal(starts); // in fire-time order
  });

  it('cancel_running: each firing cancels the running instance and starts the new one once it has stopped', async () => {
    const id = await create('cancel_running', 5000);
    await waitForRuns(id, (r) => r.filter((x) => x.outcome === 'created').length >= 3);
    const tasks = await settleInstances(id);
    const last = tasks[tasks.length - 1];
    expect(last.status).to.equal('SUCCEEDED');
    const earlier = tasks.slice(0, -1);
    expect(earlier.map((t) => t.status)).to.deep.equal(earlier.map(() => 'CANCELLED'));
    // Each cancelled one ended at (or after) the next firing, not before it was replaced.
    for (let i = 0; i < earlier.length; i++) {
      expect(Date.parse(earlier[i].completed_at)).to.be.at.least(Date.parse(tasks[i + 1].scheduled_at));
    }
    expectNoOverlap(tasks); // never two at once
  });
});

/**
 * A handler that takes 300 ms to stop after its signal aborts (cleanup, or a library that checks
 * the signal late), logging its start and its real end on the machine's monotonic clock: the
 * cancelled attempt ends when its handler stops, so the next instance of a `cancel_running` cron
 * never starts beside it.
 */
const SLOW_TO_STOP = `
const fs = require('fs');
const path = require('path');
const now = () => Number(process.hrtime.bigint()) / 1e6;
module.exports = (payload, ctx) =>
  new Promise((resolve, reject) => {
    const file = path.join(payload.dir, 'events-' + process.pid + '.log');
    const line = (ev) => fs.appendFileSync(file, JSON.stringify({ id: ctx.taskId, ev, t: now() }) + '\\n');
    line('start');
    const done = setTimeout(() => (line('end'), resolve(null)), 5000);
    ctx.signal.addEventListener('abort', () => {
      clearTimeout(done);
      setTimeout(() => (line('end'), reject(ctx.signal.reason)), 300);
    }, { once: true });
  });
`;

describe('cron cancel_running with a handler slow to stop (real scheduler)', function () {
  this.timeout(60_000);
  const s = useInProcessScheduler({ workers: 2 }, (dir) => {
    const file = path.join(dir, 'slow-to-stop.js');
    fs.writeFileSync(file, SLOW_TO_STOP);
    return { handlers: { slow_to_stop: file } };
  });

  it('the next instance starts only after the cancelled handler has stopped (its log), on either worker', async () => {
    const logs = path.join(s.dir, 'slow-logs');
    fs.mkdirSync(logs);
    const read = () =>
      fs
        .readdirSync(logs)
        .flatMap((f) => fs.readFileSync(path.join(logs, f), 'utf8').split('\n'))
        .filter((l) => l.length > 0)
        .map((l) => JSON.parse(l) as { id: string; ev: 'start' | 'end'; t: number });
    const { cron_id: id } = await s.scheduler.crons.create({
      name: 'slow-to-stop',
      cron_expression: '* * * * * *',
      task_type: 'slow_to_stop',
      payload: { dir: logs },
      overlap_policy: 'cancel_running',
    });
    const deadline = Date.now() + 30_000;
    while (read().filter((e) => e.ev === 'start').length < 4) {
      if (Date.now() > deadline) throw new Error(`4 instances not started: ${JSON.stringify(read())}`);
      await new Promise((r) => setTimeout(r, 50)); // polling the handlers' log, not timing logic
    }
    await s.scheduler.crons.update(id as string, { enabled: false });
    const runs = ((await s.scheduler.crons.runs(id as string, { limit: 100 })).runs as Array<{ task_id: string | null }>).filter(
      (r) => r.task_id,
    );
    for (const r of runs) await s.waitFor(r.task_id as string, terminal);
    const events = read().sort((a, b) => a.t - b.t || (a.ev === 'end' ? -1 : 1));
    let running = 0;
    let most = 0;
    for (const e of events) {
      running += e.ev === 'start' ? 1 : -1;
      most = Math.max(most, running);
    }
    expect(most, `handlers running at once: ${JSON.stringify(events)}`).to.equal(1);
    expect(events.filter((e) => e.ev === 'end')).to.have.length(events.filter((e) => e.ev === 'start').length);
  });
});
