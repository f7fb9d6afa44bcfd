/**
 * Cancels and member ids in a two-node cluster WITHOUT Redis (real service processes on one
 * MongoDB/FerretDB database, and again on one PostgreSQL schema; a store whose server is not named
 * is skipped, or fails with CI set, see test/helpers/cluster-store.ts):
 * - a task running on one node, cancelled through the other node's API: its handler observes the
 *   abort within the store path's bound (one heartbeat, `leaseMs / 3` = 2 s here, plus a store
 *   round trip; asserted with a generous 10 s for a loaded FerretDB; on FerretDB, whose updates are
 *   read-then-write, a cancel overwritten by the running node's heartbeat is asked once more);
 * - a `cancel_running` cron firing every second with a handler of 3 s: never two instances
 *   RUNNING (sampled through the API), and by the handlers' own log never two running at once;
 * - a second process started with a member id already held by a live process exits 78 naming
 *   the id, and no task runs twice (side-effect log).
 * Waits for states and log lines, never for a fixed time (except the sampling period).
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { http, isTerminal, waitForTask } from '../helpers/http';
import { readJsonLines } from '../helpers/process-files';
import {
  Cluster,
  listByStatus,
  memberWarnings,
  readSideEffects,
  sideEffectHandlerSource,
  startCluster,
  until,
  untilBalanced,
} from '../helpers/cluster-processes';
import { clusterTestTasks, describeEachClusterStore } from '../helpers/cluster-store';
import { startServiceProcess } from '../helpers/service-process';

/** Generous bound for the abort of a cross-node cancel (the designed bound is 2 s + a store round trip). */
const CANCEL_BOUND_MS = 10_000;

/** One line of the abortable handler's log. */
interface HandlerEvent {
  id: string;
  event: 'start' | 'aborted' | 'done';
  member: string;
  t: number;
}

/**
 * Source of a handler that logs `start`, then waits `payload.ms` (default 30 s) and logs `done`,
 * or logs `aborted` as soon as its signal aborts and rejects with the signal's reason.
 */
function abortableHandlerSource(logPath: string): string {
  return `'use strict';
const fs = require('node:fs');
const LOG = ${JSON.stringify(logPath)};
const line = (ctx, event) =>
  fs.appendFileSync(LOG, JSON.stringify({ id: ctx.taskId, event, member: process.env.MEMBER_ID, t: Date.now() }) + '\\n');
module.exports = (payload, ctx) =>
  new Promise((resolve, reject) => {
    line(ctx, 'start');
    const timer = setTimeout(() => {
      line(ctx, 'done');
      resolve({ ok: true });
    }, (payload && payload.ms) || 30000);
    ctx.signal.addEventListener('abort', () => {
      clearTimeout(timer);
      line(ctx, 'aborted');
      reject(ctx.signal.reason);
    }, { once: true });
  });
`;
}

const eventsIn = (file: string): HandlerEvent[] => readJsonLines<HandlerEvent>(file).lines;

describeEachClusterStore(
  'cluster without Redis: cancels reach the running node; cancel_running never overlaps; one process per member id',
  function (store) {
    this.timeout(240_000);
    let cluster: Cluster | null = null;

    after(async () => {
      await cluster?.stop();
    });

    const logOf = (c: Cluster) => path.join(c.scratch, 'abortable.log');

    before(async () => {
      cluster = await startCluster({
        store,
        nodes: 2,
        // A lease TTL of 8 s: on 2 shared, saturated cores FerretDB writes can take seconds, and a
        // shorter TTL makes partitions change hands all the time.
        leaseTtlMs: 8000,
        // leaseMs 6000: workers heartbeat every 2 s, the store path's delivery interval.
        config: { leaseMs: 6000, horizonMs: 1000, cronHorizonMs: 4000, workers: 1 },
        configIn: (scratch) => {
          const abortable = path.join(scratch, 'abortable.js');
          const sideEffect = path.join(scratch, 'side-effect.js');
          fs.writeFileSync(abortable, abortableHandlerSource(path.join(scratch, 'abortable.log')));
          fs.writeFileSync(sideEffect, sideEffectHandlerSource(path.join(scratch, 'side-effects.log'), 20));
          return { handlers: { abortable, side_effect: sideEffect } };
        },
      });
      await untilBalanced(cluster.nodes, cluster.partitions);
    });

    it('a task running on one node, cancelled through the other: its handler observes the abort within the bound', async () => {
      const c = cluster as Cluster;
      const byMember = new Map(c.nodes.map((n) => [n.memberId, n]));
      // FerretDB 1.x applies an update as read-then-write (docs/MONGODB.md, `atomicUpdates`): the
      // running node's heartbeat, rewriting the task in the same instant, can put back a
      // cancel_requested of false. Only there, and only with that signature (still RUNNING, same
      // attempt, flag false), the cancel is asked once more and counted as lost to the engine.
      const atomic = await c.db.atomicUpdates();
      const delays: number[] = [];
      let lostToEngine = 0;
      for (let i = 0; i < 6; i++) {
        const sub = await http('POST', `${c.nodes[i % 2].svc.url}/api/v1/tasks`, { task_type: 'abortable', payload: { ms: 60_000 } });
        expect(sub.status).to.equal(202);
        const id = sub.body.task_id as string;
        const started = await until(
          `${id} started`,
          async () => eventsIn(logOf(c)).find((e) => e.id === id && e.event === 'start'),
          20_000,
        );
        const other = c.nodes.find((n) => n.memberId !== started.member) as (typeof c.nodes)[number];
        expect(byMember.has(started.member)).to.equal(true);
        const cancelOnce = async (): Promise<{ asked: number; aborted: HandlerEvent | undefined }> => {
          const asked = Date.now();
          const res = await http('POST', `${other.svc.url}/api/v1/tasks/${id}/cancel`);
          expect(res.status, JSON.stringify(res.body)).to.equal(202);
          const aborted = await until(
            `${id} aborted on ${started.member}`,
            async () => eventsIn(logOf(c)).find((e) => e.id === id && e.event === 'aborted'),
            CANCEL_BOUND_MS,
          ).catch(() => undefined);
          return { asked, aborted };
        };
        let { asked, aborted } = await cancelOnce();
        if (!aborted) {
          const seen = (await http('GET', `${other.svc.url}/api/v1/tasks/${id}`)).body;
          const lost = !atomic && seen.status === 'RUNNING' && seen.cancel_requested === false && seen.attempts === 1;
          expect(
            lost,
            `${id} not aborted on ${started.member} in ${CANCEL_BOUND_MS} ms (stored: ${seen.status}, cancel_requested ` +
              `${seen.cancel_requested}, attempts ${seen.attempts}); members' warnings:\n${memberWarnings(c.nodes)}\nstored: ${JSON.stringify(seen)}`,
          ).to.equal(true);
          lostToEngine++;
          ({ asked, aborted } = await cancelOnce());
          expect(aborted, `${id} not aborted on ${started.member} after the cancel was asked again`).to.not.equal(undefined);
        }
        delays.push((aborted as HandlerEvent).t - asked);
        const task = await waitForTask(other.svc.url, id, isTerminal, 15_000);
        expect(task.status).to.equal('CANCELLED');
      }
      expect(Math.max(...delays), `abort delays ${delays.join(', ')} ms`).to.be.below(CANCEL_BOUND_MS);
      expect(lostToEngine, 'cancels lost to a concurrent heartbeat (FerretDB only)').to.be.at.most(2);
      console.log(`      cross-node cancel → handler abort (ms): ${delays.join(', ')}; cancels lost to the engine: ${lostToEngine}`);
    });

    it('limits set through one node are in force on the other soon after (its LISTEN/NOTIFY announcement), deletes too', async function () {
      // Without Redis only PostgreSQL has a bus; on MongoDB a node reads the stored limits every 60 s.
      if (store !== 'postgres') this.skip();
      const [a, b] = (cluster as Cluster).nodes;
      const put = await http('PUT', `${a.svc.url}/api/v1/concurrency-limits/stripe`, { max_running: 2 });
      expect(put.status, JSON.stringify(put.body)).to.equal(200);
      expect((await http('PUT', `${a.svc.url}/api/v1/rate-limits/abortable`, { rate_per_second: 7 })).status).to.equal(200);
      expect((await http('PUT', `${a.svc.url}/api/v1/tenants/acme`, { weight: 3 })).status).to.equal(200);
      await until(
        'the limits in force on the other node',
        async () => {
          const key = (await http('GET', `${b.svc.url}/api/v1/concurrency-limits/stripe`)).body.max_running === 2;
          const rates = (await http('GET', `${b.svc.url}/api/v1/rate-limits`)).body.rate_limits as Array<{ task_type: string }>;
          const tenants = (await http('GET', `${b.svc.url}/api/v1/tenants`)).body.tenants as Array<{ tenant_id: string; weight: number }>;
          return key && rates.some((r) => r.task_type === 'abortable') && tenants.some((t) => t.tenant_id === 'acme' && t.weight === 3);
        },
        10_000,
      );
      expect((await http('DELETE', `${a.svc.url}/api/v1/concurrency-limits/stripe`)).status).to.equal(200);
      expect((await http('DELETE', `${a.svc.url}/api/v1/rate-limits/abortable`)).status).to.equal(200);
      await until(
        'the deletes in force on the other node',
        async () => {
          const key = (await http('GET', `${b.svc.url}/api/v1/concurrency-limits/stripe`)).body.max_running === null;
          const rates = (await http('GET', `${b.svc.url}/api/v1/rate-limits`)).body.rate_limits as unknown[];
          return key && rates.length === 0;
        },
        10_000,
      );
    });

    it('a cancel_running cron every second with a 3 s handler: never two instances RUNNING', async function () {
      const c = cluster as Cluster;
      // The next instance starts only once the cancelled one's end is stored: a compare-and-set
      // between nodes. FerretDB 1.x's is a read then a write (two RUNNING seen at load 3 in a
      // sample of its store): shown on servers where it is atomic (PostgreSQL, MongoDB).
      if (!(await c.db.atomicUpdates())) this.skip();
      const created = await http('POST', `${c.nodes[0].svc.url}/api/v1/cron-tasks`, {
        name: 'cancel-running',
        cron_expression: '* * * * * *',
        task_type: 'abortable',
        payload: { ms: 3000 },
        overlap_policy: 'cancel_running',
      });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      const cronId = created.body.cron_id as string;
      const prefix = `cron-${cronId}-`;
      let samples = 0;
      let most = 0;
      const sampleUntil = Date.now() + 15_000;
      while (Date.now() < sampleUntil) {
        const running = [...(await listByStatus(c.nodes[samples % 2].svc.url, 'RUNNING', 'abortable')).keys()].filter((id) =>
          id.startsWith(prefix),
        );
        most = Math.max(most, running.length);
        expect(running.length, `RUNNING instances at sample ${samples}: ${running.join(', ')}`).to.be.at.most(1);
        samples++;
        await new Promise((r) => setTimeout(r, 100)); // the sampling period
      }
      expect((await http('PATCH', `${c.nodes[0].svc.url}/api/v1/cron-tasks/${cronId}`, { enabled: false })).status).to.equal(200);
      // By the handlers' own log: an instance starts only after the previous one stopped.
      const events = eventsIn(logOf(c)).filter((e) => e.id.startsWith(prefix));
      const starts = events.filter((e) => e.event === 'start').sort((a, b) => a.t - b.t);
      expect(starts.length, 'instances that ran').to.be.at.least(3);
      for (let i = 1; i < starts.length; i++) {
        const prev = starts[i - 1];
        const end = events.find((e) => e.id === prev.id && e.event !== 'start');
        expect(end, `${prev.id} had not stopped when ${starts[i].id} started`).to.not.equal(undefined);
        expect((end as HandlerEvent).t, `${prev.id} still ran when ${starts[i].id} started`).to.be.at.most(starts[i].t);
      }
      console.log(`      ${samples} samples, at most ${most} RUNNING; ${starts.length} instances ran, one at a time`);
    });

    it('a second process with a member id held by a live process exits 78 naming the id; no task runs twice', async () => {
      const c = cluster as Cluster;
      const first = c.nodes[0];
      const ids: string[] = [];
      // Batches of 20 (one request each, to alternating nodes), 6 on FerretDB: it is slow on shared cores.
      const perBatch = clusterTestTasks(store, 20);
      let batch = 0;
      const submit = async (n: number) => {
        const tasks = Array.from({ length: n }, (_, i) => ({ task_type: 'side_effect', payload: { batch, i } }));
        const r = await http('POST', `${c.nodes[batch++ % 2].svc.url}/api/v1/tasks/batch`, { tasks });
        expect(r.status, JSON.stringify(r.body)).to.equal(202);
        ids.push(...r.body.tasks.map((t: { task_id: string }) => t.task_id));
      };
      await submit(perBatch);
      const dir = path.join(c.scratch, 'duplicate');
      fs.mkdirSync(dir);
      const env = {
        ...c.db.env,
        MEMBER_ID: first.memberId,
        LEASE_TTL_MS: String(c.leaseTtlMs),
        PARTITIONS: String(c.partitions),
        SCHEDULER_CONFIG: path.join(first.dir, 'cluster-config.json'),
      };
      const [refusal] = await Promise.all([
        startServiceProcess(dir, env, 30_000).then(
          async (svc) => {
            await svc.stop();
            return null;
          },
          (err: Error) => err,
        ),
        submit(perBatch),
      ]);
      expect(refusal, 'the duplicate started').to.be.instanceOf(Error);
      const message = (refusal as Error).message;
      expect(message).to.contain('exited early (78)');
      expect(message).to.contain(`member id "${first.memberId}" is held by another live process`);
      await submit(perBatch);
      const effects = path.join(c.scratch, 'side-effects.log');
      await until(
        'every task ran',
        async () => {
          const ran = new Set(readSideEffects(effects).lines.map((l) => l.id));
          return ids.every((id) => ran.has(id)) ? true : undefined;
        },
        120_000,
        500,
      );
      const succeeded = await until(
        'every task SUCCEEDED',
        async () => {
          const done = await listByStatus(c.nodes[1].svc.url, 'SUCCEEDED', 'side_effect');
          return ids.every((id) => done.has(id)) ? done : undefined;
        },
        30_000,
        500,
      );
      expect(
        ids.map((id) => succeeded.get(id)),
        'attempts',
      ).to.deep.equal(ids.map(() => 1));
      const { lines } = readSideEffects(effects);
      const runs = new Map<string, number>();
      for (const l of lines) runs.set(l.id, (runs.get(l.id) ?? 0) + 1);
      const twice = new Set([...runs].filter(([, n]) => n > 1).map(([id]) => id));
      const repeated = lines.filter((l) => twice.has(l.id));
      expect(repeated, `tasks run twice: ${JSON.stringify(repeated)}; members' warnings:\n${memberWarnings(c.nodes)}`).to.deep.equal([]);
      expect(
        ids.filter((id) => !runs.has(id)),
        'tasks never run',
      ).to.deep.equal([]);
      console.log(`      duplicate refused: ${message.split('\n').find((l) => l.includes('member id'))}`);
    });
  },
);
