/**
 * A graceful stop of one member of a two-node PostgreSQL cluster without Redis (real service
 * processes): attempts still running when its shutdown grace ends become free retries, and the
 * other member starts them at once (their owner is woken over LISTEN/NOTIFY), not at its next read
 * of the partition's window (up to half the 30 s horizon later: 0.03–14.8 s measured before). The
 * stopping member's worker processes are killed before the retries are written, so an interrupted
 * attempt's handler is never running when its retry starts elsewhere. The member that left says so
 * on the bus, and the other takes its released leases at once, not at its next lease round. A cron
 * made through one member is announced too, so the other fires it once the first has stopped.
 * Waits for log lines and states, never for a fixed time.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { http, waitForTask } from '../helpers/http';
import { isAlive, readJsonLines } from '../helpers/process-files';
import { Cluster, startCluster, until, untilBalanced } from '../helpers/cluster-processes';
import { describeEachClusterStore } from '../helpers/cluster-store';

/** The stopping member's grace (ms): its 4 s handlers are still running when it ends. */
const GRACE_MS = 2500;
/** Generous bound from an interrupted attempt's stored end to its retry's start on the other member (ms). */
const RETRY_START_BOUND_MS = 5000;
/** `LEASE_TTL_MS`: lease rounds every 3 s, so a take-over at the next round would come 0–3 s after the release. */
const LEASE_TTL_MS = 9000;
/** Generous bound from the SIGTERM to the other member owning every partition (ms): told on the bus, it runs a round at once. */
const TAKEOVER_BOUND_MS = 1500;

interface Start {
  id: string;
  attempt: number;
  member: string;
  pid: number;
  t: number;
}

/** A handler that logs its start (task, attempt, member, pid), then takes `payload.ms` and succeeds. */
function slowHandlerSource(logPath: string): string {
  return `'use strict';
const fs = require('node:fs');
module.exports = async (payload, ctx) => {
  fs.appendFileSync(${JSON.stringify(logPath)}, JSON.stringify({ id: ctx.taskId, attempt: ctx.attempt, member: process.env.MEMBER_ID, pid: process.pid, t: Date.now() }) + '\\n');
  await new Promise((resolve) => setTimeout(resolve, payload.ms));
  return { ok: true };
};
`;
}

describeEachClusterStore(
  'cluster graceful stop: attempts cut off by the grace run again on the other member at once',
  function () {
    this.timeout(120_000);
    let cluster: Cluster | null = null;
    after(async () => {
      await cluster?.stop();
    });

    it('every interrupted attempt starts again on the other member within the bound of its free retry; no worker of the stopped member outlives it', async () => {
      cluster = await startCluster({
        store: 'postgres',
        nodes: 2,
        leaseTtlMs: LEASE_TTL_MS,
        // A cron window of 60 s: a node reloads its crons every 30 s, so one learns of a cron made
        // elsewhere only by the `cron` announcement within this test.
        config: { workers: 1, shutdownGraceMs: GRACE_MS, cronHorizonMs: 60_000 },
        configIn: (scratch) => {
          const slow = path.join(scratch, 'slow.js');
          fs.writeFileSync(slow, slowHandlerSource(path.join(scratch, 'starts.log')));
          return { handlers: { slow } };
        },
      });
      const c = cluster;
      const log = path.join(c.scratch, 'starts.log');
      const starts = () => readJsonLines<Start>(log).lines;
      await untilBalanced(c.nodes, c.partitions);
      const ids: string[] = [];
      for (let i = 0; i < 12; i++) {
        const sub = await http('POST', `${c.nodes[i % 2].svc.url}/api/v1/tasks`, { task_type: 'slow', payload: { ms: 4000 } });
        expect(sub.status, JSON.stringify(sub.body)).to.equal(202);
        ids.push(sub.body.task_id as string);
      }
      await until('every task started', async () => (new Set(starts().map((s) => s.id)).size === ids.length ? true : undefined), 20_000);
      // Stop the member running more of them.
      const firsts = starts();
      const count = (m: string) => firsts.filter((s) => s.member === m).length;
      const [stopping, staying] = count(c.nodes[0].memberId) >= count(c.nodes[1].memberId) ? c.nodes : [c.nodes[1], c.nodes[0]];
      const cut = firsts.filter((s) => s.member === stopping.memberId);
      expect(cut.length).to.be.at.least(1);
      // A cron made through the member about to stop: the other evaluates it from now on too.
      const cron = await http('POST', `${stopping.svc.url}/api/v1/cron-tasks`, {
        name: 'every-second',
        cron_expression: '* * * * * *',
        task_type: 'noop',
      });
      expect(cron.status, JSON.stringify(cron.body)).to.equal(201);
      const cronId = cron.body.cron_id as string;
      const signalled = Date.now();
      const takeover = until(
        'the other member owns every partition',
        async () => {
          const ready = (await http('GET', `${staying.svc.url}/readyz`)).body;
          return ready.partitions?.owned === c.partitions ? Date.now() - signalled : undefined;
        },
        30_000,
        20,
      );
      await stopping.svc.stop(30_000);
      const takeoverMs = await takeover;
      const exited = Date.now();

      const gaps: number[] = [];
      for (const first of cut) {
        const task = await waitForTask(staying.svc.url, first.id, (t) => t.status === 'SUCCEEDED', 30_000);
        const view = (await http('GET', `${staying.svc.url}/api/v1/tasks/${first.id}?include=attempts`)).body;
        const [interrupted] = view.attempt_history as Array<{ ended_at: string; error: { type: string } | null }>;
        expect(interrupted.error?.type, first.id).to.equal('service_stopped');
        const retry = starts().filter((s) => s.id === first.id && s.attempt === 2);
        expect(
          retry.map((s) => s.member),
          first.id,
        ).to.deep.equal([staying.memberId]);
        gaps.push(retry[0].t - Date.parse(interrupted.ended_at));
        expect(task.attempts).to.equal(2);
        expect(isAlive(first.pid), `the stopped member's worker ${first.pid} outlived it`).to.equal(false);
      }
      // Before: up to half the horizon (15 s) after the free retry was written.
      expect(Math.max(...gaps), `retry starts after the interruption (ms): ${gaps.join(', ')}`).to.be.below(RETRY_START_BOUND_MS);
      // Before: the cron fired on the stopped member only, and nowhere until the other's reload (30 s).
      const onTime = await until(
        'a firing of the cron after the stop, on the other member',
        async () => {
          const runs = (await http('GET', `${staying.svc.url}/api/v1/cron-tasks/${cronId}/runs?limit=50`)).body.runs as Array<{
            fire_time: string;
            outcome: string;
            recorded_at: string;
          }>;
          return runs.find((r) => r.outcome === 'created' && Date.parse(r.fire_time) > exited);
        },
        10_000,
      );
      const cronLateMs = Date.parse(onTime.recorded_at) - Date.parse(onTime.fire_time);
      // Before: at the other member's next lease round, up to a third of the TTL (3 s) later.
      expect(takeoverMs, 'SIGTERM → the other member owns every partition (ms)').to.be.below(TAKEOVER_BOUND_MS);
      console.log(
        `      take-over ${takeoverMs} ms after SIGTERM; the cron fired on the other member (${cronLateMs} ms after its instant); ${cut.length} attempts cut off by the grace, their retries started on the other member after (ms): ${gaps.join(', ')}`,
      );
    });
  },
  ['postgres'],
);
