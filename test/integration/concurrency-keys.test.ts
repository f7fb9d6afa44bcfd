import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { useInProcessScheduler } from '../helpers/in-process-scheduler';
import { NEEDS_REDIS, REDIS_URL } from '../helpers/redis';

/**
 * One line of the handlers' event log: an attempt's start or end, in ms on the machine's monotonic
 * clock (`process.hrtime`: CLOCK_MONOTONIC on Linux, one clock for every process and never
 * stepped, where each process's wall clock reading could be moved by a clock adjustment).
 */
interface LogEvent {
  id: string;
  key: string | null;
  ev: 'start' | 'end';
  t: number;
}

/**
 * The handler writes its start and end to a log file of its own process (appends of one short
 * line), so the overlap of attempts is read exactly afterwards instead of sampled.
 */
const HANDLER = `
const fs = require('fs');
const path = require('path');
const now = () => Number(process.hrtime.bigint()) / 1e6;
module.exports = async (payload, ctx) => {
  const file = path.join(payload.dir, 'events-' + process.pid + '.log');
  fs.appendFileSync(file, JSON.stringify({ id: ctx.taskId, key: payload.key, ev: 'start', t: now() }) + '\\n');
  await new Promise((r) => setTimeout(r, payload.ms));
  fs.appendFileSync(file, JSON.stringify({ id: ctx.taskId, key: payload.key, ev: 'end', t: now() }) + '\\n');
  return null;
};
`;

/** The machine's monotonic clock in ms, as the handlers read it. */
const monotonicMs = () => Number(process.hrtime.bigint()) / 1e6;

/**
 * Most attempts of `key` running at once in the log (an end and a start at the same instant: the
 * end first), and the shortest time from an end to a start that took the last free slot (ms).
 * @throws AssertionError when the log does not hold one start and one end per task (an attempt
 *   that never ended would count as running to the end of the log)
 */
function maxOverlap(events: LogEvent[], key: string, limit: number): { max: number; tightestMs: number } {
  const mine = events.filter((e) => e.key === key).sort((a, b) => a.t - b.t || (a.ev === 'end' ? -1 : 1));
  const starts = new Map<string, number>();
  for (const e of mine) if (e.ev === 'start') starts.set(e.id, (starts.get(e.id) ?? 0) + 1);
  expect(
    [...starts].filter(([, n]) => n !== 1),
    'tasks of the key started more than once',
  ).to.deep.equal([]);
  let running = 0;
  let max = 0;
  let lastEnd = -Infinity;
  let tightestMs = Infinity;
  for (const e of mine) {
    if (e.ev === 'start') {
      if (running === limit - 1) tightestMs = Math.min(tightestMs, e.t - lastEnd);
      running++;
    } else {
      running--;
      lastEnd = e.t;
    }
    max = Math.max(max, running);
  }
  return { max, tightestMs };
}

/**
 * A concurrency key with a limit of 3 on the real scheduler (actors, forked workers, SQLite):
 * its 200 tasks never run more than 3 at once, and 200 tasks on other keys submitted with them
 * finish about as fast as they do alone. Run with the node's own count, and (with REDIS_URL) with
 * the slots leased from Redis.
 */
for (const mode of ['local count', 'Redis slots'] as const) {
  describe(`concurrency keys on the real scheduler (${mode}): a limit per key, no head-of-line blocking`, function () {
    this.timeout(180_000);
    if (mode === 'Redis slots' && !REDIS_URL) {
      it.skip(NEEDS_REDIS, () => undefined);
      return;
    }
    const redis = mode === 'Redis slots' ? { redisUrl: REDIS_URL } : {};
    const s = useInProcessScheduler({ workers: 2, workerConcurrency: 16, partitions: 8, ...redis }, (dir) => {
      const file = path.join(dir, 'keyed-sleep.js');
      fs.writeFileSync(file, HANDLER);
      return { handlers: { keyed_sleep: file } };
    });

    const logDir = () => {
      const d = path.join(s.dir, `log-${Date.now()}-${Math.random().toString(36).slice(2)}`);
      fs.mkdirSync(d);
      return d;
    };
    const readLog = (dir: string): LogEvent[] =>
      fs
        .readdirSync(dir)
        .flatMap((f) => fs.readFileSync(path.join(dir, f), 'utf8').split('\n'))
        .filter((l) => l.length > 0)
        .map((l) => JSON.parse(l) as LogEvent);

    /** Waits until no task waits or runs (polling the store's counts, not timing logic). */
    async function drained(): Promise<void> {
      for (;;) {
        const c = await s.scheduler.store.countByState();
        if (c.SCHEDULED + c.PENDING + c.RUNNING + c.RETRYING === 0) return;
        await new Promise((r) => setTimeout(r, 25));
      }
    }

    const tasks = (dir: string, keys: Array<string | null>, ms: number) =>
      keys.map((key) => ({ task_type: 'keyed_sleep', payload: { dir, key, ms }, ...(key ? { concurrency_key: key } : {}) }));
    const otherKeys = Array.from({ length: 200 }, (_, i) => (i % 4 === 0 ? null : `other-${i % 20}`));

    it('200 tasks on a key limited to 3 never run more than 3 at once; 200 others finish as fast as alone', async () => {
      const { service, tenants, store } = s.scheduler;
      const ms = 25;
      // A key of its own: runs sharing one Redis never share its slot set.
      const hot = `hot-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;

      // Baseline: the 200 others alone.
      const alone = logDir();
      const t0 = monotonicMs();
      await service.submitBatch({ tasks: tasks(alone, otherKeys, ms) });
      await drained();
      const aloneEvents = readLog(alone);
      expect(aloneEvents.filter((e) => e.ev === 'end')).to.have.length(200);
      const aloneMs = Math.max(...aloneEvents.map((e) => e.t)) - t0;

      // The same 200 others, submitted after 200 tasks of a key limited to 3.
      await tenants.concurrency.put(hot, { max_running: 3 });
      const mixed = logDir();
      const t1 = monotonicMs();
      await service.submitBatch({ tasks: tasks(mixed, Array(200).fill(hot), ms) });
      await service.submitBatch({ tasks: tasks(mixed, otherKeys, ms) });
      await drained();
      const events = readLog(mixed);
      const hotEvents = events.filter((e) => e.key === hot);
      const others = events.filter((e) => e.key !== hot);
      expect(
        hotEvents.filter((e) => e.ev === 'end'),
        'every hot task ran once',
      ).to.have.length(200);
      expect(others.filter((e) => e.ev === 'end')).to.have.length(200);

      const { max: overlap, tightestMs } = maxOverlap(events, hot, 3);
      expect(overlap, `most hot attempts running at once (closest hand-over of the third slot ${tightestMs.toFixed(2)} ms)`).to.equal(3);
      const othersMs = Math.max(...others.map((e) => e.t)) - t1;
      const hotMs = Math.max(...hotEvents.map((e) => e.t)) - t1;
      // The hot key needs at least 200 × 25 ms / 3 ≈ 1.7 s; the others do not wait for it.
      expect(hotMs).to.be.at.least((200 * ms) / 3);
      expect(othersMs, `others: ${othersMs.toFixed(0)} ms with the hot key, ${aloneMs.toFixed(0)} ms alone`).to.be.below(
        Math.max(3 * aloneMs, aloneMs + 500),
      );
      expect(othersMs, 'the others are done well before the hot key').to.be.below(hotMs / 2);

      const counts = await store.countByState();
      expect(counts.SUCCEEDED).to.equal(600);
      expect((await tenants.concurrency.get(hot)).running).to.equal(0);
      console.log(
        `      concurrency keys (${mode}): others ${othersMs.toFixed(0)} ms with a hot key (alone ${aloneMs.toFixed(0)} ms); hot key ${hotMs.toFixed(0)} ms; max overlap ${overlap}, closest hand-over ${tightestMs.toFixed(2)} ms`,
      );
    });
  });
}
