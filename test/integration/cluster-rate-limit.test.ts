/**
 * Issue 7, must-show 5: a task-type rate limit holds across three service processes that share one
 * Redis, where the token bucket lives (Lua scripts, leased in batches). `send_email` is limited to
 * 100/s with a burst of 10; 1,200 tasks are submitted, a third to each node, so every node has work
 * for the whole run (about 12 s at the limit). Each node keeps its tasks in its own SQLite file:
 * the limit is Redis's job whatever the store, and FerretDB (CI's MongoDB stand-in) runs its
 * SQLite backend at full CPU well below 100 tasks/s on this machine, which would make the limit
 * vacuous. The MongoDB-store cluster runs the same dispatcher and buckets.
 *
 * The bound checked is the one the Redis bucket promises (docs/CLUSTER.md, "Coordination
 * through Redis"): over any window of T seconds at most burst + rate × T starts, plus one
 * leased batch per node (≤ 10 tokens here). This is an upper bound on starts (the limit holding),
 * not a speed assertion; the achieved rate is printed for the record. start times are `started_at`
 * of each task, stamped by each node on the Redis server's clock (one time source).
 * Skipped without REDIS_URL.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { http } from '../helpers/http';
import { ServiceProcess, startServiceProcess } from '../helpers/service-process';
import { tempDir } from '../helpers/temp-dir';

const redisUrl = process.env.REDIS_URL;
const NODES = 3;
const TASKS = 1200;
const RATE = 100;
const BURST = 10;
/** One leased batch per node: a lease is ~100 ms of the rate, at most the burst. */
const SLACK_PER_NODE = Math.min(BURST, Math.ceil(RATE / 10));

async function completed(svc: ServiceProcess): Promise<number> {
  const body = await (await fetch(`${svc.url}/metrics`)).text();
  const m = /^scheduler_tasks_completed_total\{task_type="send_email",status="SUCCEEDED"\} (\d+)/m.exec(body);
  return m ? Number(m[1]) : 0;
}

/** Most starts inside any window [t, t + windowMs) (sorted start times, two pointers). */
function maxInWindow(sorted: number[], windowMs: number): number {
  let best = 0;
  for (let i = 0, j = 0; j < sorted.length; j++) {
    while (sorted[j] - sorted[i] >= windowMs) i++;
    best = Math.max(best, j - i + 1);
  }
  return best;
}

describe('a rate limit of 100/s holds across three nodes sharing one Redis token bucket', function () {
  this.timeout(180_000);
  if (!redisUrl) {
    it.skip('needs REDIS_URL (`source .ci/services.sh` starts Redis)', () => undefined);
    return;
  }
  const dir = tempDir();
  const nodes: ServiceProcess[] = [];

  after(async () => {
    await Promise.all(nodes.map((n) => n.stop()));
    dir.remove();
  });

  it('no 1 s window holds more than rate + burst + one leased batch per node; every task succeeds', async () => {
    const handler = path.join(dir.path, 'send-email.js');
    fs.writeFileSync(handler, 'module.exports = async () => ({ sent: true });\n');
    const config = path.join(dir.path, 'cluster.json');
    fs.writeFileSync(
      config,
      JSON.stringify({ handlers: { send_email: handler }, rateLimits: { send_email: { ratePerSecond: RATE, burst: BURST } } }),
    );
    for (let n = 0; n < NODES; n++) {
      fs.mkdirSync(path.join(dir.path, `n${n}`));
      nodes.push(
        await startServiceProcess(path.join(dir.path, `n${n}`), {
          REDIS_URL: redisUrl,
          WORKERS: '1',
          SCHEDULER_CONFIG: config,
        }),
      );
    }

    const ids: Array<{ id: string; svc: ServiceProcess }> = [];
    const perNode = TASKS / NODES;
    await Promise.all(
      nodes.map(async (svc) => {
        for (let sent = 0; sent < perNode; sent += 200) {
          const tasks = Array.from({ length: Math.min(200, perNode - sent) }, () => ({ task_type: 'send_email' }));
          const r = await http('POST', `${svc.url}/api/v1/tasks/batch`, { tasks });
          expect(r.status, JSON.stringify(r.body)).to.equal(202);
          ids.push(...(r.body.tasks as Array<{ task_id: string }>).map((t) => ({ id: t.task_id, svc })));
        }
      }),
    );
    expect(ids).to.have.length(TASKS);

    const deadline = Date.now() + 120_000;
    for (;;) {
      const done = (await Promise.all(nodes.map(completed))).reduce((a, b) => a + b, 0);
      if (done >= TASKS) break;
      if (Date.now() > deadline) throw new Error(`only ${done} of ${TASKS} tasks succeeded`);
      await new Promise((r) => setTimeout(r, 200)); // polling for completions, not timing logic
    }

    const starts: number[] = [];
    for (let i = 0; i < ids.length; i += 50) {
      const page = await Promise.all(ids.slice(i, i + 50).map((t) => http('GET', `${t.svc.url}/api/v1/tasks/${t.id}`)));
      for (const r of page) {
        expect(r.body.status).to.equal('SUCCEEDED');
        expect(r.body.attempts, `${r.body.task_id} ran more than once`).to.equal(1);
        starts.push(Date.parse(r.body.started_at));
      }
    }
    starts.sort((a, b) => a - b);
    const worst1s = maxInWindow(starts, 1000);
    const span = (starts[starts.length - 1] - starts[0]) / 1000;
    const bound = RATE + BURST + NODES * SLACK_PER_NODE;
    const tenSeconds = starts.filter((t) => t < starts[0] + 10_000).length;
    console.log(
      `      rate limit across ${NODES} nodes: ${TASKS} starts in ${span.toFixed(2)} s (${(TASKS / span).toFixed(1)}/s), ` +
        `${tenSeconds} in the first 10 s, most in any 1 s window ${worst1s} (bound ${bound})`,
    );
    expect(worst1s).to.be.at.most(bound);
    // Over the whole run the limit holds too: burst + rate × span + one batch per node.
    expect(TASKS).to.be.at.most(BURST + RATE * span + NODES * SLACK_PER_NODE);
  });
});
